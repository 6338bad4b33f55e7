// RECORD parsing: the one CSV dialect Python's csv module writes (comma separated,
// fields with commas or quotes quoted, quotes doubled), and the urlsafe base64 digests.
#include <array>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

#include "pkg/handles.h"
#include "pkg/wheel_internal.h"

namespace imgtool::pkg::internal {

namespace {

// Splits one CSV line; false on an unterminated quote.
bool SplitCsv(std::string_view line, std::vector<std::string>* fields) {
  fields->assign(1, "");
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields->back().push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields->back().push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields->emplace_back();
    } else {
      fields->back().push_back(c);
    }
  }
  return !quoted;
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

}  // namespace

bool DecodeBase64Url(std::string_view in, std::string* out) {
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  if (in.size() % 4 == 1) return false;
  out->clear();
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v = Base64Value(c);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return true;
}

Status CheckRecordEntry(const RecordEntry& entry, const oci::Digest& sha256, uint64_t size) {
  if (entry.sha256.empty()) {
    return MakeError(ErrorKind::kIntegrity, Quote(entry.path) + ": RECORD gives no hash");
  }
  if (entry.sha256 != sha256) {
    return MakeError(ErrorKind::kIntegrity, Quote(entry.path) + ": sha256 mismatch: RECORD says " +
                                                entry.sha256.Short() + ", file is " + sha256.Short());
  }
  if (entry.has_size && entry.size != size) {
    return MakeError(ErrorKind::kIntegrity, Quote(entry.path) + ": size mismatch: RECORD says " +
                                                std::to_string(entry.size) + ", file has " + std::to_string(size));
  }
  return Status::Ok();
}

bool IsBytecode(std::string_view path) {
  return path.find("__pycache__/") != std::string_view::npos ||
         (path.size() >= 4 && path.substr(path.size() - 4) == ".pyc");
}

Result<std::vector<RecordEntry>> ParseRecord(const std::string& text) {
  std::vector<RecordEntry> entries;
  std::unordered_set<std::string> seen;
  std::vector<std::string> f;
  size_t pos = 0;
  int row = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++row;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    auto bad = [&](const std::string& why) {
      return MakeError(ErrorKind::kInvalidInput, "RECORD row " + std::to_string(row) + ": " + why);
    };
    if (!SplitCsv(line, &f) || f.size() != 3) return bad("want 3 comma-separated fields");
    RecordEntry e;
    e.path = f[0];
    if (e.path.empty()) return bad("empty path");
    if (!seen.insert(e.path).second) return bad(Quote(e.path) + " listed twice");
    if (!f[1].empty()) {
      if (f[1].rfind("sha256=", 0) != 0) return bad(Quote(e.path) + ": unsupported hash " + Quote(f[1]));
      std::string raw;
      if (!DecodeBase64Url(std::string_view(f[1]).substr(7), &raw) || raw.size() != 32) {
        return bad(Quote(e.path) + ": malformed sha256 " + Quote(f[1]));
      }
      std::array<uint8_t, 32> bytes{};
      std::memcpy(bytes.data(), raw.data(), 32);
      e.sha256 = oci::Digest::FromBytes(bytes);
    }
    if (!f[2].empty()) {
      char* stop = nullptr;
      unsigned long long v = std::strtoull(f[2].c_str(), &stop, 10);
      if (stop == nullptr || *stop != '\0' || f[2][0] == '-') return bad(Quote(e.path) + ": malformed size");
      e.has_size = true;
      e.size = v;
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

Status ReadNameVersion(const std::string& metadata, WheelPackage* wheel) {
  auto fields = ParseStanza(metadata);
  wheel->name = fields["Name"];
  wheel->version = fields["Version"];
  if (wheel->name.empty() || wheel->version.empty()) {
    return MakeError(ErrorKind::kInvalidInput, "METADATA lacks Name or Version");
  }
  return Status::Ok();
}

}  // namespace imgtool::pkg::internal
