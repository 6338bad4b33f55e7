// UnpackDeb: the outer shape of a .deb (ar: debian-binary, control.tar.*, data.tar.*,
// in that order, as dpkg-deb requires) and its control metadata. The data archive itself
// is unpacked by deb_data.cc.
#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "pkg/deb_internal.h"

#include "archive/archive_library.h"

namespace imgtool::pkg {

namespace {

using internal::MemberTar;

constexpr uint64_t kMaxControlMember = 16u << 20;  // control files are text; symbols files are the largest

bool StartsWith(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

Error Invalid(const std::string& why) { return MakeError(ErrorKind::kInvalidInput, why); }

// Reads the current ar member whole (small members only).
Result<std::string> ReadMemberBytes(struct archive* a, const std::string& name, uint64_t max) {
  std::string out;
  char buf[8192];
  for (;;) {
    la_ssize_t n = archive_read_data(a, buf, sizeof buf);
    if (n < 0) return Invalid(name + ": " + internal::ArchiveError(a));
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max) return Invalid(name + ": larger than " + std::to_string(max) + " bytes");
  }
}

// Reads control, conffiles and the maintainer-script names out of control.tar.*.
Status ReadControlTar(struct archive* outer, const std::string& member, DebPackage* deb) {
  auto tar = MemberTar::Open(outer, member);
  if (!tar.ok()) return tar.error();
  static const char* kScripts[] = {"preinst", "postinst", "prerm", "postrm", "config"};
  bool have_control = false;
  uint64_t total = 0;
  for (bool first = true;; first = false) {
    struct archive_entry* e = nullptr;
    int r = archive_read_next_header((*tar)->get(), &e);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) return Invalid(member + ": " + (*tar)->ErrorText());
    if (first) IMGTOOL_TRY((*tar)->CheckFilter());
    std::string name = archive_entry_pathname(e) != nullptr ? archive_entry_pathname(e) : "";
    if (StartsWith(name, "./")) name.erase(0, 2);
    if (archive_entry_filetype(e) != AE_IFREG) continue;  // "./" itself
    total += static_cast<uint64_t>(archive_entry_size(e));
    if (total > kMaxControlMember)
      return Invalid(member + ": larger than " + std::to_string(kMaxControlMember) + " bytes");
    if (std::find(std::begin(kScripts), std::end(kScripts), name) != std::end(kScripts)) {
      deb->maintainer_scripts.push_back(name);
    } else if (name == "control" || name == "conffiles") {
      auto text = ReadMemberBytes((*tar)->get(), member + ": " + name, kMaxControlMember);
      if (!text.ok()) return text.error();
      if (name == "control") {
        std::string& c = *text;
        while (!c.empty() && (c.back() == '\n' || c.back() == ' ' || c.back() == '\r')) c.pop_back();
        deb->control = c;
        have_control = true;
      } else {
        size_t pos = 0;
        while (pos < text->size()) {
          size_t end = text->find('\n', pos);
          if (end == std::string::npos) end = text->size();
          std::string line = text->substr(pos, end - pos);
          pos = end + 1;
          if (!line.empty() && line.back() == '\r') line.pop_back();
          // "remove-on-upgrade /etc/x" (dpkg >= 1.20) flags a conffile that is not shipped.
          if (line.empty() || line.front() != '/') continue;
          deb->conffiles.push_back(line);
        }
      }
    }
  }
  std::sort(deb->maintainer_scripts.begin(), deb->maintainer_scripts.end());
  if (!have_control) return Invalid(member + ": no control file");
  auto fields = ParseStanza(deb->control);
  deb->name = fields["Package"];
  deb->version = fields["Version"];
  deb->architecture = fields["Architecture"];
  if (deb->name.empty() || deb->version.empty() || deb->architecture.empty()) {
    return Invalid(member + ": control lacks Package, Version or Architecture");
  }
  // Before anything is staged: these values become file names and status-file text.
  Status checked = internal::CheckControl(deb->control, fields);
  if (!checked.ok()) return checked.error().Context(member);
  return Status::Ok();
}

uint64_t InstalledSizeBytes(const DebPackage& deb) {
  auto fields = ParseStanza(deb.control);
  const std::string& kib = fields["Installed-Size"];
  char* end = nullptr;
  unsigned long long v = std::strtoull(kib.c_str(), &end, 10);
  if (kib.empty() || end == nullptr || *end != '\0') return 0;  // absent or unparsable: not declared
  return static_cast<uint64_t>(v) * 1024;
}

Result<DebPackage> Unpack(oci::Reader& in, const std::string& staging, const UnpackLimits& limits, bool allow_setuid) {
  IMGTOOL_TRY(libarchive::Load());
  internal::ReadArchivePtr ar(archive_read_new());
  if (!ar) return MakeError(ErrorKind::kInternal, "archive_read_new failed");
  archive_read_support_format_ar(ar.get());
  // In order only: whatever hashes `in` sees every byte the ar reader is given.
  internal::ArchiveSource source(in, std::nullopt);
  if (source.OpenOn(ar.get()) != ARCHIVE_OK) {
    // libarchive reads the first header while opening: a readable file failing here is
    // not an ar archive.
    if (source.read_error()) return *source.read_error();
    return Invalid("not an ar archive");
  }
  auto tree = internal::StagingTree::Open(staging, /*implicit_parents=*/false);
  if (!tree.ok()) return tree.error();

  DebPackage deb;
  // dpkg-deb's order: debian-binary, control.tar.*, data.tar.*; "_"-members are ignored.
  enum { kWantBinary, kWantControl, kWantData, kDone } state = kWantBinary;
  for (;;) {
    struct archive_entry* e = nullptr;
    int r = archive_read_next_header(ar.get(), &e);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) {
      if (source.read_error()) return *source.read_error();
      const char* err = archive_error_string(ar.get());
      return Invalid(state == kWantBinary ? "not an ar archive" : (err != nullptr ? err : "corrupt ar archive"));
    }
    std::string name = archive_entry_pathname(e) != nullptr ? archive_entry_pathname(e) : "";
    if (StartsWith(name, "_")) continue;
    if (state == kWantBinary) {
      if (name != "debian-binary") return Invalid("first member is " + internal::Quote(name) + ", not debian-binary");
      auto text = ReadMemberBytes(ar.get(), name, 64);
      if (!text.ok()) return text.error();
      if (!StartsWith(*text, "2.")) return Invalid("debian-binary: unsupported format " + internal::Quote(*text));
      state = kWantControl;
    } else if (state == kWantControl) {
      if (!StartsWith(name, "control.tar")) return Invalid("expected control.tar.*, found " + internal::Quote(name));
      IMGTOOL_TRY(ReadControlTar(ar.get(), name, &deb));
      state = kWantData;
    } else if (state == kWantData) {
      if (!StartsWith(name, "data.tar")) return Invalid("expected data.tar.*, found " + internal::Quote(name));
      auto tar = MemberTar::Open(ar.get(), name);
      if (!tar.ok()) return tar.error();
      Status st = internal::UnpackDataTar(**tar, *tree, limits, InstalledSizeBytes(deb), allow_setuid, &deb);
      if (!st.ok()) return st.error().Context(name);
      state = kDone;
    } else {
      return Invalid("unexpected member " + internal::Quote(name) + " after data.tar");
    }
  }
  if (state == kWantBinary) return Invalid("not an ar archive");
  if (state != kDone) return Invalid(state == kWantControl ? "no control.tar member" : "no data.tar member");
  std::sort(deb.files.begin(), deb.files.end(),
            [](const PackageFile& a, const PackageFile& b) { return a.path < b.path; });
  return deb;
}

}  // namespace

Result<DebPackage> UnpackDeb(oci::Reader& deb_file, const std::string& name, const std::string& staging,
                             const UnpackLimits& limits, bool allow_setuid) {
  auto deb = Unpack(deb_file, staging, limits, allow_setuid);
  if (!deb.ok()) return deb.error().Context(name);
  return deb;
}

Result<DebPackage> UnpackDeb(const std::string& deb_path, const std::string& staging, const UnpackLimits& limits,
                             bool allow_setuid) {
  auto fd = fs::OpenRegular(deb_path);
  if (!fd.ok()) return fd.error();
  fs::FdReader file(std::move(*fd));
  return UnpackDeb(file, deb_path, staging, limits, allow_setuid);
}

}  // namespace imgtool::pkg
