#include "builder/packages.h"

#include <algorithm>
#include <functional>
#include <map>

#include "fs/hashed_file.h"
#include "pkg/package.h"

namespace imgtool::build {

namespace {

Error Mismatch(const std::string& where, const std::string& what, const std::string& pinned,
               const std::string& actual) {
  return MakeError(ErrorKind::kIntegrity,
                   where + "." + what + ": the spec pins '" + pinned + "' but the package says '" + actual + "'");
}

bool IsSharedLibrary(const std::string& path) {
  std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  return base.find(".so") != std::string::npos &&
         (base.size() == base.find(".so") + 3 || base[base.find(".so") + 3] == '.');
}

std::string Join(const std::string& prefix, const std::string& rel) {
  return prefix.empty() ? rel : prefix + "/" + rel;
}

std::vector<PackageLibrary> Libraries(const std::vector<pkg::PackageFile>& files, const std::string& prefix) {
  std::vector<PackageLibrary> out;
  for (const auto& f : files) {
    if (IsSharedLibrary(f.path)) out.push_back({"/" + Join(prefix, f.path), f.sha256});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}

std::function<void(const PackageSpec&, PackageFileStage)>& Hook() {
  static std::function<void(const PackageSpec&, PackageFileStage)> hook;
  return hook;
}

void AtStage(const PackageSpec& p, PackageFileStage stage) {
  if (Hook()) Hook()(p, stage);
}

Error PinMismatch(const PackageSpec& p, const oci::Digest& actual) {
  return MakeError(ErrorKind::kIntegrity, p.where + ".sha256: " + p.given + ": the spec pins " + p.sha256.str() +
                                              " but the file is " + actual.str());
}

// The package file's one open: a download is read through the descriptor fetch hashed
// (never reopened by its name in the cache); a path the spec names is opened as given
// but never waited on (a FIFO is refused).
Result<std::unique_ptr<oci::Reader>> OpenPackageFile(const PackageSpec& p) {
  std::unique_ptr<oci::Reader> reader;
  if (p.fetched) {
    auto r = p.fetched->Open();
    if (!r.ok()) return r.error().Context(p.where + ".src: " + p.given);
    reader = std::move(*r);
  } else {
    auto fd = fs::OpenRegular(p.src);
    if (!fd.ok()) return fd.error().Context(p.where + ".src: " + p.given);
    reader = std::make_unique<fs::FdReader>(std::move(*fd));
  }
  AtStage(p, PackageFileStage::kOpened);
  return reader;
}

// Hashed whole before it is used: a wheel (the zip reader seeks). Where others can write
// the file, HashedFile reads it from a private copy made while hashing.
Result<std::shared_ptr<const fs::HashedFile>> HashPackageFile(const PackageSpec& p, const std::string& spill_dir) {
  if (p.fetched) {
    AtStage(p, PackageFileStage::kOpened);
    return p.fetched;
  }
  auto fd = fs::OpenRegular(p.src);
  if (!fd.ok()) return fd.error().Context(p.where + ".src: " + p.given);
  AtStage(p, PackageFileStage::kOpened);
  auto hashed = fs::HashedFile::Hash(std::move(*fd), spill_dir, p.given);
  if (!hashed.ok()) return hashed.error().Context(p.where + ".src");
  return hashed;
}

}  // namespace

void SetPackageFileHookForTest(std::function<void(const PackageSpec&, PackageFileStage)> hook) {
  Hook() = std::move(hook);
}

Result<oci::FileDigest> CheckPackageFile(const PackageSpec& p) {
  auto in = OpenPackageFile(p);
  if (!in.ok()) return in.error();
  fs::HashingReader hashed(std::move(*in));
  auto d = hashed.Finish();
  if (!d.ok()) return d.error().Context(p.where + ".src: " + p.given);
  if (d->digest != p.sha256) return PinMismatch(p, d->digest);
  return *d;
}

namespace {

Result<std::shared_ptr<fs::TempDir>> NewStaging(const std::string& parent) {
  if (!parent.empty()) IMGTOOL_TRY(fs::MakeDirs(parent));
  auto t = fs::TempDir::Create("imgtool-pkg-", parent);
  if (!t.ok()) return t.error();
  return std::make_shared<fs::TempDir>(std::move(*t));
}

std::map<std::string, oci::Digest> StagedDigests(const std::vector<pkg::PackageFile>& files) {
  std::map<std::string, oci::Digest> out;
  for (const auto& f : files) out[f.path] = f.sha256;
  return out;
}

archive::Entry Generated(const std::string& path, std::string content) {
  archive::Entry e;
  e.path = path;
  e.mode = 0644;
  e.size = content.size();
  e.content = std::move(content);
  return e;
}

// The deb is hashed while it is unpacked, from its one open: the pin is checked on the
// digest of exactly the bytes unpacked (and before an unpacking error: a file that is
// not the pinned one is that, whatever it holds), and the staging folder is used only
// once it matched.
Result<StagedPackage> StageDeb(const PackageSpec& p, const std::string& parent) {
  auto in = OpenPackageFile(p);
  if (!in.ok()) return in.error();
  auto dir = NewStaging(parent);
  if (!dir.ok()) return dir.error();
  fs::HashingReader hashed(std::move(*in));
  auto deb = pkg::UnpackDeb(hashed, p.given, (*dir)->path(), pkg::UnpackLimits{}, p.allow_setuid);
  auto file = hashed.Finish();
  if (!file.ok()) return file.error().Context(p.where + ".src: " + p.given);
  if (file->digest != p.sha256) return PinMismatch(p, file->digest);
  if (!deb.ok()) return deb.error().Context(p.where);
  if (deb->name != p.name) return Mismatch(p.where, "name", p.name, deb->name);
  if (deb->version != p.version) return Mismatch(p.where, "version", p.version, deb->version);
  StagedPackage s;
  s.record = {PackageKind::kDeb,
              deb->name,
              deb->version,
              file->digest,
              file->size,
              p.given,
              pkg::DpkgStatusStanza(*deb),
              Libraries(deb->files, ""),
              p.where};
  s.staging = *dir;
  s.staged_digests = StagedDigests(deb->files);
  s.allow_setuid = p.allow_setuid;
  std::string info = "var/lib/dpkg/info/" + pkg::DpkgInfoName(*deb);
  for (auto [suffix, text] : {std::pair{".list", pkg::DpkgList(*deb)}, std::pair{".md5sums", pkg::DpkgMd5sums(*deb)}}) {
    s.ids.push_back(oci::Digest::Of(text).str());
    s.extra.push_back(Generated(info + suffix, std::move(text)));
  }
  if (!deb->maintainer_scripts.empty()) {
    std::string list;
    for (const auto& m : deb->maintainer_scripts) list += (list.empty() ? "" : ", ") + m;
    s.notes.push_back(deb->name + " " + deb->version + " has maintainer scripts (" + list + "); they were not run");
  }
  return s;
}

// The wheel is hashed whole from its one open and checked against its pin before the
// zip reader sees a byte; the reader then reads those same bytes (fs::HashedFile).
Result<StagedPackage> StageWheel(const PackageSpec& p, const std::string& parent) {
  auto dir = NewStaging(parent);  // first: it makes `parent`, where a private copy may go
  if (!dir.ok()) return dir.error();
  auto file = HashPackageFile(p, parent);
  if (!file.ok()) return file.error();
  if ((*file)->digest().digest != p.sha256) return PinMismatch(p, (*file)->digest().digest);
  AtStage(p, PackageFileStage::kHashed);
  auto in = (*file)->Open();
  if (!in.ok()) return in.error().Context(p.where + ".src: " + p.given);
  auto wheel = pkg::UnpackWheel(**in, (*file)->digest().size, p.given, (*dir)->path(), pkg::UnpackLimits{});
  if (!wheel.ok()) return wheel.error().Context(p.where);
  if (NormalizeWheelName(wheel->name) != NormalizeWheelName(p.name))
    return Mismatch(p.where, "name", p.name, wheel->name);
  if (wheel->version != p.version) return Mismatch(p.where, "version", p.version, wheel->version);
  StagedPackage s;
  const oci::FileDigest& pinned = (*file)->digest();
  s.record = {PackageKind::kWheel,
              wheel->name,
              wheel->version,
              pinned.digest,
              pinned.size,
              p.given,
              "",
              Libraries(wheel->files, p.prefix),
              p.where};
  s.staging = *dir;
  s.staged_digests = StagedDigests(wheel->files);
  s.dest = p.prefix;
  return s;
}

// RECORD path -> in-image path: the inverse of the host's layout (see package.h).
std::string InImagePath(const std::string& record_path, const pkg::WheelPackage& w, const PackageSpec& p) {
  if (record_path.rfind(w.dist_info + "/", 0) == 0) return Join(p.prefix, record_path);
  if (!p.strip_prefix.empty() && record_path.rfind(p.strip_prefix, 0) == 0) {
    return Join(p.prefix, record_path.substr(p.strip_prefix.size()));
  }
  return Join(p.prefix, record_path);
}

Result<StagedPackage> StageInstalledWheel(const PackageSpec& p) {
  auto iw = pkg::ReadInstalledWheel(p.dist_info, p.site_root, p.strip_prefix);
  if (!iw.ok()) return iw.error().Context(p.where);
  const pkg::WheelPackage& w = iw->wheel;
  if (NormalizeWheelName(w.name) != NormalizeWheelName(p.name)) return Mismatch(p.where, "name", p.name, w.name);
  if (w.version != p.version) return Mismatch(p.where, "version", p.version, w.version);
  if (p.record_sha256 && *p.record_sha256 != w.record_digest) {
    return MakeError(ErrorKind::kIntegrity, p.where + ".record_sha256: the spec pins " + p.record_sha256->str() +
                                                " but " + w.dist_info + "/RECORD is " + w.record_digest.str());
  }
  StagedPackage s;
  s.record = {PackageKind::kInstalledWheel, w.name, w.version, w.record_digest, 0, p.given, "", {}, p.where};
  for (size_t i = 0; i < w.files.size(); ++i) {
    archive::Entry e;
    e.path = InImagePath(w.files[i].path, w, p);
    e.mode = (iw->modes[i] & 0111) ? 0755 : 0644;
    e.size = w.files[i].size;
    e.source = iw->host_paths[i];
    // Hashed against RECORD by ReadInstalledWheel's open; the layer reads it again and
    // must get those bytes.
    e.expect_sha256 = w.files[i].sha256;
    s.record.size += e.size;
    if (IsSharedLibrary(e.path)) s.record.libraries.push_back({"/" + e.path, w.files[i].sha256});
    s.extra.push_back(std::move(e));
    s.ids.push_back(w.files[i].sha256.str());
  }
  std::sort(s.record.libraries.begin(), s.record.libraries.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  return s;
}

}  // namespace

std::string NormalizeWheelName(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (out.empty() || out.back() != '-') out += '-';
    } else {
      out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
  }
  return out;
}

Result<StagedPackage> StagePackage(const PackageSpec& spec, const std::string& staging_parent) {
  switch (spec.kind) {
    case PackageKind::kDeb:
      return StageDeb(spec, staging_parent);
    case PackageKind::kWheel:
      return StageWheel(spec, staging_parent);
    case PackageKind::kInstalledWheel:
      return StageInstalledWheel(spec);
  }
  return MakeError(ErrorKind::kInternal, spec.where + ": unknown package kind");
}

}  // namespace imgtool::build
