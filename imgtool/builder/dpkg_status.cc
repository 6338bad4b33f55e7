#include "builder/dpkg_status.h"

#include <algorithm>
#include <map>

#include "pkg/package.h"

namespace imgtool::build {

namespace {

// Splits a status file into stanzas (each without its trailing blank lines).
std::vector<std::string> Stanzas(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty()) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += line + "\n";
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace

Result<std::string> DpkgStatus(const std::string& base_status, const std::vector<PackageRecord>& packages) {
  std::map<std::string, const PackageRecord*> debs;
  for (const auto& p : packages) {
    if (p.kind != PackageKind::kDeb) continue;
    auto [it, inserted] = debs.emplace(p.name, &p);
    if (!inserted) {
      return MakeError(ErrorKind::kInvalidInput,
                       p.where + ": package " + p.name + " is also installed by " + it->second->where);
    }
  }
  std::string out;
  for (const auto& stanza : Stanzas(base_status)) {
    auto fields = pkg::ParseStanza(stanza);
    if (debs.count(fields["Package"])) continue;
    out += stanza + "\n";
  }
  for (const auto& [name, p] : debs) {
    out += p->status_stanza;
    if (out.size() < 2 || out.compare(out.size() - 2, 2, "\n\n") != 0) out += "\n";
  }
  return out;
}

}  // namespace imgtool::build
