// ParseStanza: RFC-822-like "Key: value" blocks, the shape of both a deb's control file
// and a wheel's METADATA headers. Lenient on purpose: it only reads; the callers decide
// which fields are required and what a valid value is.
#include <string_view>

#include "pkg/package.h"

namespace imgtool::pkg {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::map<std::string, std::string> ParseStanza(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::string* current = nullptr;  // value a continuation line extends; null after a duplicate key
  bool seen_field = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (Trim(line).empty()) {
      if (seen_field) break;  // end of the stanza (or METADATA's body starts)
      continue;               // blank lines before the first field
    }
    if (line.front() == ' ' || line.front() == '\t') {
      if (current != nullptr) {
        current->push_back('\n');
        current->append(line.substr(1));
      }
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      current = nullptr;
      continue;
    }
    seen_field = true;
    std::string key(Trim(line.substr(0, colon)));
    auto [it, inserted] = fields.emplace(key, std::string(Trim(line.substr(colon + 1))));
    current = inserted ? &it->second : nullptr;
  }
  return fields;
}

}  // namespace imgtool::pkg
