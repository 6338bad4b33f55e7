// CheckControl: a .deb's control stanza against Debian policy's grammar, before any of it
// is used. Package and Architecture become dpkg's info file names
// (var/lib/dpkg/info/<name>:<arch>.list), Version goes into the SBOM and the build notes,
// and the stanza itself is copied into var/lib/dpkg/status: a "/" in a field, or a blank
// line that starts a second stanza, would write outside the package's own records.
//
// Not here: which fields a package must have beyond Package, Version and Architecture,
// and anything dpkg only warns about (a version not starting with a digit).
#include <cctype>
#include <set>
#include <string_view>

#include "pkg/deb_internal.h"

namespace imgtool::pkg::internal {

namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

bool AllOf(std::string_view s, std::string_view extra, bool (*base)(char)) {
  for (char c : s) {
    if (!base(c) && extra.find(c) == std::string_view::npos) return false;
  }
  return true;
}

Error Bad(const std::string& field, const std::string& value, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, "control: " + field + " " + Quote(value) + ": " + why);
}

// Policy 5.6.1: at least two characters, starting with an alphanumeric.
Status CheckPackage(const std::string& v) {
  if (v.size() < 2 || !IsLowerAlnum(v[0]) || !AllOf(v, "+.-", IsLowerAlnum)) {
    return Bad("Package", v, "not a Debian package name ([a-z0-9][a-z0-9+.-]+)");
  }
  return Status::Ok();
}

// Policy 5.6.12: [epoch:]upstream_version[-debian_revision]. The epoch is a number; the
// revision follows the last hyphen and holds alphanumerics and "+.~"; the upstream
// version holds alphanumerics and ".+~" (and "-" only when there is a revision).
Status CheckVersion(const std::string& v) {
  std::string_view rest = v;
  if (size_t colon = rest.find(':'); colon != std::string_view::npos) {
    std::string_view epoch = rest.substr(0, colon);
    if (epoch.empty() || epoch.size() > 9 || !AllOf(epoch, "", [](char c) { return c >= '0' && c <= '9'; })) {
      return Bad("Version", v, "the epoch before \":\" is not a number of at most 9 digits");
    }
    rest.remove_prefix(colon + 1);
  }
  std::string_view upstream = rest;
  if (size_t dash = rest.rfind('-'); dash != std::string_view::npos) {
    std::string_view revision = rest.substr(dash + 1);
    if (revision.empty() || !AllOf(revision, "+.~", IsAlnum)) {
      return Bad("Version", v, "the revision after the last \"-\" may hold only alphanumerics and \"+.~\"");
    }
    upstream = rest.substr(0, dash);
  }
  if (upstream.empty()) return Bad("Version", v, "no upstream version");
  if (!AllOf(upstream, "+.~-", IsAlnum)) {
    return Bad("Version", v, "the upstream version may hold only alphanumerics and \".+~-\"");
  }
  return Status::Ok();
}

// Policy 5.6.8: a binary package names one architecture: a Debian architecture name
// ("amd64", "kfreebsd-i386") or "all". Wildcards ("any", "linux-any") use the same letters.
Status CheckArchitecture(const std::string& v) {
  if (v.empty() || !IsLowerAlnum(v[0]) || !AllOf(v, "-", IsLowerAlnum)) {
    return Bad("Architecture", v, "not a Debian architecture name ([a-z0-9][a-z0-9-]*)");
  }
  return Status::Ok();
}

Status CheckMultiArch(const std::string& v) {
  if (v != "no" && v != "same" && v != "foreign" && v != "allowed") {
    return Bad("Multi-Arch", v, "want no, same, foreign or allowed");
  }
  return Status::Ok();
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// One stanza of "Name: value" lines and their continuations; field names are
// case-insensitive (deb822), so "package:" after "Package:" is a duplicate, as dpkg says.
Status CheckStanzaShape(const std::string& control) {
  std::set<std::string> seen;
  size_t pos = 0;
  for (int line_no = 1; pos < control.size(); ++line_no) {
    size_t end = control.find('\n', pos);
    if (end == std::string::npos) end = control.size();
    std::string_view line(control.data() + pos, end - pos);
    pos = end + 1;
    std::string where = "control: line " + std::to_string(line_no);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
      return MakeError(ErrorKind::kInvalidInput, where + ": blank line (a control file holds one stanza)");
    }
    if (line.front() == ' ' || line.front() == '\t') {
      if (line_no == 1) return MakeError(ErrorKind::kInvalidInput, where + ": continuation line before any field");
      continue;
    }
    size_t colon = line.find(':');
    std::string_view name = line.substr(0, colon);
    if (colon == std::string_view::npos || name.empty() || name.front() == '-' || name.front() == '#' ||
        !AllOf(name, "", [](char c) { return c > ' ' && c < 127 && c != ':'; })) {
      return MakeError(ErrorKind::kInvalidInput, where + ": not a \"Field: value\" line");
    }
    if (!seen.insert(Lower(name)).second) {
      return MakeError(ErrorKind::kInvalidInput, where + ": duplicate field " + std::string(name));
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckControl(const std::string& control, const std::map<std::string, std::string>& fields) {
  IMGTOOL_TRY(CheckStanzaShape(control));
  auto get = [&](const char* k) {
    auto it = fields.find(k);
    return it == fields.end() ? std::string() : it->second;
  };
  IMGTOOL_TRY(CheckPackage(get("Package")));
  IMGTOOL_TRY(CheckVersion(get("Version")));
  IMGTOOL_TRY(CheckArchitecture(get("Architecture")));
  if (fields.count("Multi-Arch") != 0) IMGTOOL_TRY(CheckMultiArch(get("Multi-Arch")));
  return Status::Ok();
}

}  // namespace imgtool::pkg::internal
