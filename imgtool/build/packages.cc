#include "build/packages.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "pkg/package.h"

namespace imgtool::build {

namespace {

Error Mismatch(const std::string& where, const std::string& what, const std::string& pinned, const std::string& actual) {
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

}  // namespace

Result<oci::FileDigest> CheckPackageFile(const PackageSpec& p) {
  auto d = oci::DigestFile(p.src);
  if (!d.ok()) return d.error().Context(p.where + ".src: " + p.given);
  if (d->digest != p.sha256) {
    return MakeError(ErrorKind::kIntegrity, p.where + ".sha256: " + p.given + ": the spec pins " + p.sha256.str() +
                                                " but the file is " + d->digest.str());
  }
  return *d;
}

namespace {

Result<std::shared_ptr<fs::TempDir>> NewStaging(const std::string& parent) {
  if (!parent.empty()) IMGTOOL_TRY(fs::MakeDirs(parent));
  auto t = fs::TempDir::Create("imgtool-pkg-", parent);
  if (!t.ok()) return t.error();
  return std::make_shared<fs::TempDir>(std::move(*t));
}

archive::Entry Generated(const std::string& path, std::string content) {
  archive::Entry e;
  e.path = path;
  e.mode = 0644;
  e.size = content.size();
  e.content = std::move(content);
  return e;
}

Result<StagedPackage> StageDeb(const PackageSpec& p, const std::string& parent) {
  auto file = CheckPackageFile(p);
  if (!file.ok()) return file.error();
  auto dir = NewStaging(parent);
  if (!dir.ok()) return dir.error();
  auto deb = pkg::UnpackDeb(p.src, (*dir)->path(), pkg::UnpackLimits{}, p.allow_setuid);
  if (!deb.ok()) return deb.error().Context(p.where);
  if (deb->name != p.name) return Mismatch(p.where, "name", p.name, deb->name);
  if (deb->version != p.version) return Mismatch(p.where, "version", p.version, deb->version);
  StagedPackage s;
  s.record = {PackageKind::kDeb, deb->name, deb->version, file->digest, file->size, p.given,
              pkg::DpkgStatusStanza(*deb), Libraries(deb->files, ""), p.where};
  s.staging = *dir;
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

Result<StagedPackage> StageWheel(const PackageSpec& p, const std::string& parent) {
  auto file = CheckPackageFile(p);
  if (!file.ok()) return file.error();
  auto dir = NewStaging(parent);
  if (!dir.ok()) return dir.error();
  auto wheel = pkg::UnpackWheel(p.src, (*dir)->path(), pkg::UnpackLimits{});
  if (!wheel.ok()) return wheel.error().Context(p.where);
  if (NormalizeWheelName(wheel->name) != NormalizeWheelName(p.name)) return Mismatch(p.where, "name", p.name, wheel->name);
  if (wheel->version != p.version) return Mismatch(p.where, "version", p.version, wheel->version);
  StagedPackage s;
  s.record = {PackageKind::kWheel, wheel->name, wheel->version, file->digest, file->size, p.given,
              "", Libraries(wheel->files, p.prefix), p.where};
  s.staging = *dir;
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
    struct stat st {};
    if (::lstat(iw->host_paths[i].c_str(), &st) != 0) {
      return MakeError(ErrorKind::kNotFound, p.where + ": " + iw->host_paths[i] + ": " + std::strerror(errno));
    }
    archive::Entry e;
    e.path = InImagePath(w.files[i].path, w, p);
    e.mode = (st.st_mode & 0111) ? 0755 : 0644;
    e.size = w.files[i].size;
    e.source = iw->host_paths[i];
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
    case PackageKind::kDeb: return StageDeb(spec, staging_parent);
    case PackageKind::kWheel: return StageWheel(spec, staging_parent);
    case PackageKind::kInstalledWheel: return StageInstalledWheel(spec);
  }
  return MakeError(ErrorKind::kInternal, spec.where + ": unknown package kind");
}

}  // namespace imgtool::build
