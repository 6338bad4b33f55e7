// UnpackDataTar: the data.tar of a .deb, entry by entry, through StagingTree (which owns
// the path-safety rules). This file owns what is specific to tar: entry types, modes,
// size limits, sparse entries (holes become zeros), and hashing each regular file once
// over what it holds in staging (FileBytes: SHA-256 for us, MD5 for dpkg).
#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

#include <optional>
#include <unordered_map>

#include "pkg/deb_internal.h"
#include "pkg/file_bytes.h"

namespace imgtool::pkg::internal {

namespace {

Error Invalid(const std::string& path, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, "entry " + Quote(path) + ": " + why);
}

const char* TypeName(mode_t type) {
  switch (type) {
    case AE_IFCHR:
      return "character device";
    case AE_IFBLK:
      return "block device";
    case AE_IFIFO:
      return "fifo";
    case AE_IFSOCK:
      return "socket";
    default:
      return "unsupported entry type";
  }
}

class DataUnpacker {
 public:
  DataUnpacker(StagingTree& tree, const UnpackLimits& limits, uint64_t declared, bool allow_setuid, DebPackage* deb)
      : tree_(tree), limits_(limits), declared_(declared), allow_setuid_(allow_setuid), deb_(deb) {}

  Status Entry(MemberTar& data, struct archive_entry* e) {
    const char* raw = archive_entry_pathname(e);
    if (raw == nullptr) return MakeError(ErrorKind::kInvalidInput, "entry without a path");
    auto path = NormalizeEntryPath(raw);
    if (!path.ok()) return path.error();
    if (++entries_ > limits_.max_entries) {
      return Invalid(raw, "more than " + std::to_string(limits_.max_entries) + " entries");
    }
    if (path->empty()) return Status::Ok();  // "./": the staging root itself

    uint32_t mode = archive_entry_mode(e) & 07777;
    if (!allow_setuid_) mode &= ~uint32_t{06000};
    if (const char* link = archive_entry_hardlink(e)) {
      IMGTOOL_TRY(Hardlink(*path, link));
    } else {
      switch (archive_entry_filetype(e)) {
        case AE_IFDIR:
          IMGTOOL_TRY(tree_.AddDir(*path, mode));
          break;
        case AE_IFLNK: {
          const char* target = archive_entry_symlink(e);
          IMGTOOL_TRY(tree_.AddSymlink(*path, target != nullptr ? target : ""));
          break;
        }
        case AE_IFREG:
          IMGTOOL_TRY(File(data, e, *path, mode));
          break;
        default:
          return Invalid(*path, TypeName(archive_entry_filetype(e)));
      }
    }
    deb_->paths.push_back(*path);
    return Status::Ok();
  }

 private:
  Status Hardlink(const std::string& path, const std::string& raw_target) {
    std::string_view target = raw_target;
    if (target.substr(0, 2) == "./") target.remove_prefix(2);
    if (std::string why = PathProblem(target); !why.empty()) {
      return Invalid(path, "hardlink target " + Quote(raw_target) + ": " + why);
    }
    IMGTOOL_TRY(tree_.AddHardlink(path, std::string(target)));
    // dpkg lists every name of a file in md5sums: the link gets the target's record.
    auto it = file_index_.find(std::string(target));
    if (it == file_index_.end()) return Invalid(path, "hardlink target " + Quote(raw_target) + " has no record");
    PackageFile copy = deb_->files[it->second];
    copy.path = path;
    file_index_[path] = deb_->files.size();
    deb_->files.push_back(std::move(copy));
    return Status::Ok();
  }

  Status CheckTotal(const std::string& path) const {
    if (total_ > limits_.max_total_bytes) {
      return Invalid(path, "package unpacks to more than " + std::to_string(limits_.max_total_bytes) + " bytes");
    }
    // Installed-Size is a rounded estimate, hence the factor; a lie beyond it is hostile.
    if (declared_ > 0 && total_ > declared_ * limits_.max_expansion) {
      return Invalid(path, "package unpacks to more than " + std::to_string(limits_.max_expansion) +
                               " times its Installed-Size (" + std::to_string(declared_) + " bytes)");
    }
    return Status::Ok();
  }

  Status File(MemberTar& data, struct archive_entry* e, const std::string& path, uint32_t mode) {
    // Refuse on the header's size before writing a byte; the byte count below catches
    // an archive whose data runs past it. A sparse entry's size counts its holes: they
    // are bytes of the file in the image.
    uint64_t entry_size = static_cast<uint64_t>(archive_entry_size(e));
    if (archive_entry_size_is_set(e)) {
      total_ += entry_size;
      IMGTOOL_TRY(CheckTotal(path));
      total_ -= entry_size;
    }
    auto fd = tree_.CreateFile(path);
    if (!fd.ok()) return fd.error();
    FileBytes out(fd->get(), tree_.root() + "/" + path);
    std::optional<uint64_t> size;
    if (archive_entry_size_is_set(e)) size = entry_size;
    IMGTOOL_TRY(Fill(data, path, size, out));
    IMGTOOL_TRY(out.Finish());
    if (::fchmod(fd->get(), mode) != 0) return MakeError(ErrorKind::kInternal, "chmod " + tree_.root() + "/" + path);
    file_index_[path] = deb_->files.size();
    deb_->files.push_back(PackageFile{path, out.sha256(), out.md5_hex(), out.size()});
    return Status::Ok();
  }

  // Blocks come at their offsets. A sparse entry (GNU or pax sparse) leaves gaps between
  // them, and may end in one, that read as zeros: GNU tar (under dpkg-deb -x) writes them,
  // so the file is `size` bytes (the header's) whatever the archive stored.
  Status Fill(MemberTar& data, const std::string& path, std::optional<uint64_t> size, FileBytes& out) {
    for (;;) {
      const void* block = nullptr;
      size_t len = 0;
      la_int64_t offset = 0;
      int r = archive_read_data_block(data.get(), &block, &len, &offset);
      if (r == ARCHIVE_EOF) break;
      if (r < ARCHIVE_WARN) return Invalid(path, "reading data: " + data.ErrorText());
      if (offset < 0 || static_cast<uint64_t>(offset) < out.size()) {
        return Invalid(path, "data block at offset " + std::to_string(offset) + " overlaps earlier data");
      }
      uint64_t hole = static_cast<uint64_t>(offset) - out.size();
      IMGTOOL_TRY(Grow(path, hole + len));
      IMGTOOL_TRY(out.Zeros(hole));
      IMGTOOL_TRY(out.Data(block, len));
    }
    if (!size.has_value() || out.size() == *size) return Status::Ok();
    if (out.size() > *size) {
      return Invalid(path,
                     "data runs to " + std::to_string(out.size()) + " bytes, the header says " + std::to_string(*size));
    }
    IMGTOOL_TRY(Grow(path, *size - out.size()));
    return out.Zeros(*size - out.size());
  }

  // Counts `n` more bytes against the limits before they are hashed or written.
  Status Grow(const std::string& path, uint64_t n) {
    total_ += n;
    return CheckTotal(path);
  }

  StagingTree& tree_;
  const UnpackLimits& limits_;
  uint64_t declared_;
  bool allow_setuid_;
  DebPackage* deb_;
  uint64_t entries_ = 0;
  uint64_t total_ = 0;
  std::unordered_map<std::string, size_t> file_index_;  // path -> index in deb_->files
};

}  // namespace

Status UnpackDataTar(MemberTar& data, StagingTree& tree, const UnpackLimits& limits, uint64_t declared_bytes,
                     bool allow_setuid, DebPackage* deb) {
  DataUnpacker unpacker(tree, limits, declared_bytes, allow_setuid, deb);
  bool first = true;
  for (;;) {
    struct archive_entry* e = nullptr;
    int r = archive_read_next_header(data.get(), &e);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) return MakeError(ErrorKind::kInvalidInput, "reading header: " + data.ErrorText());
    if (first) {
      IMGTOOL_TRY(data.CheckFilter());
      first = false;
    }
    IMGTOOL_TRY(unpacker.Entry(data, e));
  }
  return tree.Finish();
}

}  // namespace imgtool::pkg::internal
