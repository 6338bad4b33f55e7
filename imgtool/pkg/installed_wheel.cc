// ReadInstalledWheel: pins a wheel that is already installed (on a build machine, in a
// base image) by its RECORD, without copying anything. Each RECORD path is mapped to a
// host path (see package.h for the prefix rule), must be a regular file there (not a
// symlink: a link's target could change under the pin), and must hash as RECORD says.
// Each file is opened once without following it and hashed from that descriptor (a
// check by lstat and a hash by a second open could each see another file).
#include <sys/stat.h>

#include <algorithm>
#include <numeric>

#include "fs/atomic_file.h"
#include "fs/hashed_file.h"
#include "pkg/handles.h"
#include "pkg/package.h"
#include "pkg/safe_extract.h"
#include "pkg/wheel_internal.h"

namespace imgtool::pkg {

namespace {

using internal::Quote;

bool StartsWith(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// Absent files an installer or a flattening machine legitimately drops (package.h).
bool MayBeAbsent(const std::string& path) {
  if (internal::IsBytecode(path)) return true;
  if (path == "__init__.py" || (path.size() > 12 && path.substr(path.size() - 12) == "/__init__.py")) return true;
  size_t start = 0;
  while (start < path.size()) {
    if (path[start] == '.') return true;  // a hidden component (".metadata/")
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return false;
}

// One RECORD row's host file: opened once without following it, hashed from that
// descriptor and checked against the row, its mode taken from the same open.
Status AddHostFile(const internal::RecordEntry& entry, const std::string& host, const std::string& record_path,
                   const std::string& record_text, InstalledWheel& out) {
  auto fd = fs::OpenRegularNoFollow(host);
  if (!fd.ok()) {
    if (fd.error().kind != ErrorKind::kNotFound) {
      return MakeError(ErrorKind::kIntegrity, Quote(entry.path) + ": " + host + " is not a regular file");
    }
    if (MayBeAbsent(entry.path)) {
      out.skipped.push_back(entry.path);
      return Status::Ok();
    }
    return MakeError(ErrorKind::kIntegrity, Quote(entry.path) + ": in RECORD but " + host + " is missing");
  }
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return MakeError(ErrorKind::kInternal, "stat " + host);
  PackageFile file{entry.path, {}, "", 0};
  if (entry.sha256.empty() && entry.path == record_path) {
    file.sha256 = out.wheel.record_digest;  // RECORD cannot hash itself: its digest is the pin
    file.size = record_text.size();
  } else if (entry.sha256.empty() && internal::IsBytecode(entry.path)) {
    out.skipped.push_back(entry.path);  // pip records the .pyc it compiled without a hash
    return Status::Ok();
  } else {
    fs::HashingReader hashed(std::make_unique<fs::FdReader>(std::move(*fd)));
    auto digest = hashed.Finish();
    if (!digest.ok()) return digest.error().Context(host);
    IMGTOOL_TRY(internal::CheckRecordEntry(entry, digest->digest, digest->size));
    file.sha256 = digest->digest;
    file.size = digest->size;
  }
  out.wheel.files.push_back(std::move(file));
  out.host_paths.push_back(host);
  out.modes.push_back(static_cast<uint32_t>(st.st_mode & 07777));
  return Status::Ok();
}

Result<InstalledWheel> Read(const std::string& dist_info_dir, const std::string& site_root,
                            const std::string& strip_prefix) {
  InstalledWheel out;
  WheelPackage& wheel = out.wheel;
  std::string dir = dist_info_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  wheel.dist_info = fs::BaseName(dir);
  auto record_text = fs::ReadSmallFile(dir + "/RECORD");
  if (!record_text.ok()) return record_text.error();
  wheel.record_digest = oci::Digest::Of(*record_text);
  auto metadata = fs::ReadSmallFile(dir + "/METADATA");
  if (!metadata.ok()) return metadata.error();
  IMGTOOL_TRY(internal::ReadNameVersion(*metadata, &wheel));
  auto record = internal::ParseRecord(*record_text);
  if (!record.ok()) return record.error().Context(dir + "/RECORD");

  std::string own_prefix = wheel.dist_info + "/";
  std::string record_path = own_prefix + "RECORD";
  for (const internal::RecordEntry& entry : *record) {
    if (std::string why = internal::PathProblem(entry.path); !why.empty()) {
      return MakeError(ErrorKind::kInvalidInput, "RECORD path " + Quote(entry.path) + ": " + why +
                                                     " (nothing outside the site root can be pinned)");
    }
    std::string host;
    if (StartsWith(entry.path, own_prefix)) {
      host = dir + "/" + entry.path.substr(own_prefix.size());
    } else if (!strip_prefix.empty() && StartsWith(entry.path, strip_prefix)) {
      host = site_root + "/" + entry.path.substr(strip_prefix.size());
    } else {
      host = site_root + "/" + entry.path;
    }
    IMGTOOL_TRY(AddHostFile(entry, host, record_path, *record_text, out));
  }
  // Sort files and host paths together.
  std::vector<size_t> order(wheel.files.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return wheel.files[a].path < wheel.files[b].path; });
  std::vector<PackageFile> files;
  std::vector<std::string> hosts;
  std::vector<uint32_t> modes;
  for (size_t i : order) {
    files.push_back(std::move(wheel.files[i]));
    hosts.push_back(std::move(out.host_paths[i]));
    modes.push_back(out.modes[i]);
  }
  wheel.files = std::move(files);
  out.host_paths = std::move(hosts);
  out.modes = std::move(modes);
  return out;
}

}  // namespace

Result<InstalledWheel> ReadInstalledWheel(const std::string& dist_info_dir, const std::string& site_root,
                                          const std::string& strip_prefix) {
  auto wheel = Read(dist_info_dir, site_root, strip_prefix);
  if (!wheel.ok()) return wheel.error().Context(dist_info_dir);
  return wheel;
}

}  // namespace imgtool::pkg
