// dpkg's database records for an unpacked package, byte-for-byte the shapes dpkg reads:
// a status stanza, info/<name>.list and info/<name>.md5sums. Conffiles are tracked the
// way dpkg tracks them: in the status stanza's Conffiles field (with their MD5), and not
// in md5sums.
#include <algorithm>

#include "pkg/package.h"

namespace imgtool::pkg {

namespace {

bool IsConffile(const DebPackage& deb, const std::string& path) {
  return std::find(deb.conffiles.begin(), deb.conffiles.end(), "/" + path) != deb.conffiles.end();
}

}  // namespace

std::string DpkgStatusStanza(const DebPackage& deb) {
  std::string out;
  bool inserted = false;
  size_t pos = 0;
  const std::string& c = deb.control;
  while (pos < c.size()) {
    size_t end = c.find('\n', pos);
    if (end == std::string::npos) end = c.size();
    std::string line = c.substr(pos, end - pos);
    pos = end + 1;
    // A status field in a shipped control file would contradict ours; dpkg drops it too.
    if (line.rfind("Status:", 0) == 0) continue;
    out += line + "\n";
    if (!inserted && line.rfind("Package:", 0) == 0) {
      out += "Status: install ok installed\n";
      inserted = true;
    }
  }
  if (!deb.conffiles.empty()) {
    out += "Conffiles:\n";
    for (const std::string& conf : deb.conffiles) {
      std::string md5 = "newconffile";  // dpkg's marker for a conffile it has no hash for
      for (const PackageFile& f : deb.files) {
        if ("/" + f.path == conf) md5 = f.md5_hex;
      }
      out += " " + conf + " " + md5 + "\n";
    }
  }
  out += "\n";
  return out;
}

std::string DpkgList(const DebPackage& deb) {
  std::string out = "/.\n";
  for (const std::string& p : deb.paths) out += "/" + p + "\n";
  return out;
}

std::string DpkgMd5sums(const DebPackage& deb) {
  std::string out;
  for (const PackageFile& f : deb.files) {
    if (IsConffile(deb, f.path)) continue;
    out += f.md5_hex + "  " + f.path + "\n";
  }
  return out;
}

std::string DpkgInfoName(const DebPackage& deb) {
  auto fields = ParseStanza(deb.control);
  if (fields["Multi-Arch"] == "same") return deb.name + ":" + deb.architecture;
  return deb.name;
}

}  // namespace imgtool::pkg
