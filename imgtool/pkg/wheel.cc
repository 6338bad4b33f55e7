// UnpackWheel: a wheel is a zip whose RECORD names and hashes every other member. The
// zip is unpacked through StagingTree (path safety), each file hashed as it is written,
// and then the two lists must match exactly: nothing extra, nothing missing, no changed
// byte. The zip's central directory is what libarchive's seekable reader trusts, the
// same one pip reads.
#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>

#include "archive/archive_library.h"
#include "fs/atomic_file.h"
#include "pkg/handles.h"
#include "pkg/package.h"
#include "pkg/safe_extract.h"
#include "pkg/wheel_internal.h"

namespace imgtool::pkg {

namespace {

using internal::Quote;

struct Hashed {
  oci::Digest sha256;
  uint64_t size = 0;
};

class ZipUnpacker {
 public:
  ZipUnpacker(internal::StagingTree& tree, const UnpackLimits& limits) : tree_(tree), limits_(limits) {}

  Status Entry(struct archive* a, struct archive_entry* e) {
    const char* raw = archive_entry_pathname(e);
    if (raw == nullptr) return MakeError(ErrorKind::kInvalidInput, "entry without a path");
    auto path = internal::NormalizeEntryPath(raw);
    if (!path.ok()) return path.error();
    if (path->empty()) return Invalid(raw, "names the wheel's root");
    if (++entries_ > limits_.max_entries)
      return Invalid(*path, "more than " + std::to_string(limits_.max_entries) + " entries");
    if (archive_entry_size_is_set(e)) declared_ += static_cast<uint64_t>(archive_entry_size(e));
    switch (archive_entry_filetype(e)) {
      case AE_IFDIR:
        return tree_.AddDir(*path, 0755);
      case AE_IFREG:
        return File(a, *path, archive_entry_mode(e));
      case AE_IFLNK:
        return Invalid(*path, "symlink in a wheel (installers do not create them)");
      default:
        return Invalid(*path, "unsupported entry type");
    }
  }

  std::map<std::string, Hashed>& files() { return files_; }

 private:
  static Error Invalid(const std::string& path, const std::string& why) {
    return MakeError(ErrorKind::kInvalidInput, "entry " + Quote(path) + ": " + why);
  }

  Status File(struct archive* a, const std::string& path, mode_t mode) {
    auto fd = tree_.CreateFile(path);
    if (!fd.ok()) return fd.error();
    oci::Sha256 sha;
    std::vector<char> buf(1 << 16);
    uint64_t size = 0;
    for (;;) {
      la_ssize_t n = archive_read_data(a, buf.data(), buf.size());
      if (n < 0) return Invalid(path, "reading data: " + internal::ArchiveError(a));
      if (n == 0) break;
      size += static_cast<uint64_t>(n);
      total_ += static_cast<uint64_t>(n);
      if (total_ > limits_.max_total_bytes) {
        return Invalid(path, "wheel unpacks to more than " + std::to_string(limits_.max_total_bytes) + " bytes");
      }
      // The zip headers declare every size: data beyond them times the factor is a bomb.
      if (total_ > declared_ * limits_.max_expansion) {
        return Invalid(path, "wheel unpacks to more than " + std::to_string(limits_.max_expansion) +
                                 " times the sizes its zip headers declare");
      }
      sha.Update(buf.data(), static_cast<size_t>(n));
      IMGTOOL_TRY(internal::WriteAll(fd->get(), buf.data(), static_cast<size_t>(n), tree_.root() + "/" + path));
    }
    // pip's rule: executable for everyone if the zip gave it any x bit, else 0644.
    mode_t want = (mode & 0111) != 0 ? 0755 : 0644;
    if (::fchmod(fd->get(), want) != 0) return MakeError(ErrorKind::kInternal, "chmod " + tree_.root() + "/" + path);
    files_[path] = Hashed{sha.Finish(), size};
    return Status::Ok();
  }

  internal::StagingTree& tree_;
  const UnpackLimits& limits_;
  uint64_t entries_ = 0;
  uint64_t total_ = 0;
  uint64_t declared_ = 0;
  std::map<std::string, Hashed> files_;
};

// The one top-level "*.dist-info" folder that holds a RECORD.
Result<std::string> FindDistInfo(const std::map<std::string, Hashed>& files) {
  std::string found;
  for (const auto& [path, h] : files) {
    size_t slash = path.find('/');
    if (slash == std::string::npos || path.substr(slash + 1) != "RECORD") continue;
    std::string dir = path.substr(0, slash);
    if (dir.size() <= 10 || dir.substr(dir.size() - 10) != ".dist-info") continue;
    if (!found.empty()) return MakeError(ErrorKind::kInvalidInput, "two dist-info folders: " + found + ", " + dir);
    found = dir;
  }
  if (found.empty()) return MakeError(ErrorKind::kInvalidInput, "no *.dist-info/RECORD");
  return found;
}

Result<WheelPackage> Unpack(oci::Reader& in, uint64_t size, const std::string& staging, const UnpackLimits& limits) {
  if (!in.CanReadAt()) return MakeError(ErrorKind::kInternal, "a wheel is read at offsets; this reader cannot");
  IMGTOOL_TRY(libarchive::Load());
  internal::ReadArchivePtr zip(archive_read_new());
  if (!zip) return MakeError(ErrorKind::kInternal, "archive_read_new failed");
  archive_read_support_format_zip_seekable(zip.get());
  internal::ArchiveSource source(in, size);
  if (source.OpenOn(zip.get()) != ARCHIVE_OK) {
    if (source.read_error()) return *source.read_error();
    return MakeError(ErrorKind::kInvalidInput, "not a zip archive: " + internal::ArchiveError(zip.get()));
  }
  auto tree = internal::StagingTree::Open(staging, /*implicit_parents=*/true);
  if (!tree.ok()) return tree.error();
  ZipUnpacker unpacker(*tree, limits);
  for (;;) {
    struct archive_entry* e = nullptr;
    int r = archive_read_next_header(zip.get(), &e);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) {
      if (source.read_error()) return *source.read_error();
      return MakeError(ErrorKind::kInvalidInput, internal::ArchiveError(zip.get(), "corrupt zip archive"));
    }
    IMGTOOL_TRY(unpacker.Entry(zip.get(), e));
  }
  IMGTOOL_TRY(tree->Finish());

  auto& files = unpacker.files();
  WheelPackage wheel;
  auto dist_info = FindDistInfo(files);
  if (!dist_info.ok()) return dist_info.error();
  wheel.dist_info = *dist_info;
  std::string record_path = wheel.dist_info + "/RECORD";
  auto record_text = fs::ReadSmallFile(staging + "/" + record_path);
  if (!record_text.ok()) return record_text.error();
  wheel.record_digest = oci::Digest::Of(*record_text);
  auto metadata = fs::ReadSmallFile(staging + "/" + wheel.dist_info + "/METADATA");
  if (!metadata.ok()) return MakeError(ErrorKind::kInvalidInput, wheel.dist_info + "/METADATA missing");
  IMGTOOL_TRY(internal::ReadNameVersion(*metadata, &wheel));

  auto record = internal::ParseRecord(*record_text);
  if (!record.ok()) return record.error().Context(record_path);
  std::map<std::string, const internal::RecordEntry*> listed;
  for (const auto& entry : *record) listed[entry.path] = &entry;
  for (const auto& [path, h] : files) {
    // RECORD cannot hash itself, nor the signatures made over it.
    bool unlisted_ok = path == record_path || path == record_path + ".jws" || path == record_path + ".p7s";
    if (listed.count(path) == 0 && !unlisted_ok) {
      return MakeError(ErrorKind::kIntegrity, Quote(path) + ": in the wheel but not in RECORD");
    }
  }
  for (const auto& entry : *record) {
    auto it = files.find(entry.path);
    if (it == files.end())
      return MakeError(ErrorKind::kIntegrity, Quote(entry.path) + ": in RECORD but not in the wheel");
    if (entry.path != record_path) IMGTOOL_TRY(internal::CheckRecordEntry(entry, it->second.sha256, it->second.size));
    wheel.files.push_back(PackageFile{entry.path, it->second.sha256, "", it->second.size});
  }
  std::sort(wheel.files.begin(), wheel.files.end(),
            [](const PackageFile& a, const PackageFile& b) { return a.path < b.path; });
  return wheel;
}

}  // namespace

Result<WheelPackage> UnpackWheel(oci::Reader& wheel_file, uint64_t size, const std::string& name,
                                 const std::string& staging, const UnpackLimits& limits) {
  auto wheel = Unpack(wheel_file, size, staging, limits);
  if (!wheel.ok()) return wheel.error().Context(name);
  return wheel;
}

Result<WheelPackage> UnpackWheel(const std::string& wheel_path, const std::string& staging,
                                 const UnpackLimits& limits) {
  uint64_t size = 0;
  auto fd = fs::OpenRegular(wheel_path, &size);
  if (!fd.ok()) return fd.error();
  fs::FdReader file(std::move(*fd));
  return UnpackWheel(file, size, wheel_path, staging, limits);
}

}  // namespace imgtool::pkg
