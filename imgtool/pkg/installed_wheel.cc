// ReadInstalledWheel: pins a wheel that is already installed (on a build machine, in a
// base image) by its RECORD, without copying anything. Each RECORD path is mapped to a
// host path (see package.h for the prefix rule), must be a regular file there (not a
// symlink: a link's target could change under the pin), and must hash as RECORD says.
#include <sys/stat.h>

#include <algorithm>
#include <numeric>

#include "fs/atomic_file.h"
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
    struct stat st {};
    if (::lstat(host.c_str(), &st) != 0) {
      if (MayBeAbsent(entry.path)) {
        out.skipped.push_back(entry.path);
        continue;
      }
      return MakeError(ErrorKind::kIntegrity, Quote(entry.path) + ": in RECORD but " + host + " is missing");
    }
    if (!S_ISREG(st.st_mode)) {
      return MakeError(ErrorKind::kIntegrity, Quote(entry.path) + ": " + host + " is not a regular file");
    }
    if (entry.sha256.empty()) {
      if (entry.path == record_path) {
        wheel.files.push_back(PackageFile{entry.path, wheel.record_digest, "", record_text->size()});
        out.host_paths.push_back(host);
        continue;
      }
      if (internal::IsBytecode(entry.path)) {  // pip records the .pyc it compiled without a hash
        out.skipped.push_back(entry.path);
        continue;
      }
    }
    auto digest = oci::DigestFile(host);
    if (!digest.ok()) return digest.error();
    IMGTOOL_TRY(internal::CheckRecordEntry(entry, digest->digest, digest->size));
    wheel.files.push_back(PackageFile{entry.path, digest->digest, "", digest->size});
    out.host_paths.push_back(host);
  }
  // Sort files and host paths together.
  std::vector<size_t> order(wheel.files.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return wheel.files[a].path < wheel.files[b].path; });
  std::vector<PackageFile> files;
  std::vector<std::string> hosts;
  for (size_t i : order) {
    files.push_back(std::move(wheel.files[i]));
    hosts.push_back(std::move(out.host_paths[i]));
  }
  wheel.files = std::move(files);
  out.host_paths = std::move(hosts);
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
