// Writes headers onto a folder on disk exactly where rootfs::Applier placed them in its
// merged view (umoci's: each layer onto the folder holding those below). The Applier has
// already made every refusal ImageFs makes and resolved every symlink on the way inside
// its tree, so this side follows nothing: each folder is opened one component at a time
// relative to its parent's descriptor with O_NOFOLLOW, files are created with
// O_CREAT|O_EXCL|O_NOFOLLOW, links with symlinkat/linkat relative to descriptors. A
// symlink met on disk where the tree has a folder is an error, never followed.
//
// Folders are made 0700 while the unpack runs (a non-root unpack can still write into a
// folder the image makes read-only) and get their mode, owner and times in Finish.
//
// Not here: which headers are valid (rootfs/applier.h), the bundle around the rootfs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "archive/layer.h"
#include "fs/safe_open.h"
#include "oci/result.h"
#include "rootfs/applier.h"

namespace imgtool::bundle {

struct WriterOptions {
  // chown every node to the header's uid/gid (as root). Off: everything belongs to the
  // unpacking user, as umoci --rootless leaves it.
  bool chown = false;
};

struct WriterStats {
  uint64_t bytes = 0;           // regular file content written
  uint64_t xattrs_skipped = 0;  // refused by the filesystem or the kernel (rootless: trusted.*, security.*)
};

class DiskWriter {
 public:
  // `root`: an empty folder the caller made, opened O_DIRECTORY.
  DiskWriter(fs::UniqueFd root, const WriterOptions& options) : root_(std::move(root)), options_(options) {}

  // One header as placed; `read` streams a regular file's content. `merged`: for an
  // opaque folder, which names the tree still holds. Errors say why, without the entry.
  Status Write(const rootfs::Placement& placed, const archive::TarHeader& h, const archive::ReadContent& read,
               const rootfs::Applier& merged);
  // Every folder's mode, owner and times, deepest first.
  Status Finish();
  const WriterStats& stats() const { return stats_; }

 private:
  struct DirMeta {
    uint32_t mode = 0755;
    uint32_t uid = 0, gid = 0;
    bool has_owner = false;  // a folder made only as a parent keeps the unpacking user
    bool has_time = false;
    int64_t mtime = 0;
    int32_t mtime_nsec = 0;
  };
  Result<fs::UniqueFd> OpenDir(const std::string& dir, bool create);
  Status Create(int parent, const rootfs::Placement& placed, const archive::TarHeader& h,
                const archive::ReadContent& read);
  Status WriteFile(int parent, const std::string& name, const archive::TarHeader& h, const archive::ReadContent& read);
  Status Hardlink(int parent, const rootfs::Placement& placed, const archive::TarHeader& h);
  Status Special(int parent, const std::string& name, const archive::TarHeader& h);
  Status Metadata(int parent, const std::string& name, const archive::TarHeader& h, bool symlink);
  Status Xattrs(int fd, const archive::TarHeader& h);
  Status KeepOnly(int dirfd, const std::string& path, const rootfs::Applier& merged);
  void Forget(const std::string& path);  // folder metadata of `path` and below

  fs::UniqueFd root_;
  WriterOptions options_;
  WriterStats stats_;
  std::map<std::string, DirMeta> dirs_;
  std::string cached_path_;  // the last folder opened, kept while nothing is removed
  fs::UniqueFd cached_fd_;
};

// Removes `name` in `dirfd` and everything below it, following nothing; folders the
// unpacking user cannot enter are made 0700 first. ENOENT is success.
Status RemoveAt(int dirfd, const std::string& name);

}  // namespace imgtool::bundle
