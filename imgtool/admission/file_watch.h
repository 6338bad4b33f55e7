// Has a file changed on disk? Polled (the webhook's policy files and TLS pair, mounted
// from ConfigMaps and Secrets): first the stat identity (device, inode, size, mtime in ns,
// following symlinks, so an atomic rename over the file and Kubernetes' swap of a
// volume's ..data symlink are both seen), then, when that moved, the sha256 of the bytes
// (a touch, or a rewrite of the same bytes, is not a change).
//
// Not here: what a change means (policy_sets.h, tls_reload.h) or the polling thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "oci/result.h"

namespace imgtool::admission {

struct FileStamp {
  dev_t dev = 0;
  ino_t ino = 0;
  int64_t size = -1;
  int64_t mtime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

// stat(2); a file that is missing or unreadable stamps as an error.
Result<FileStamp> StampOf(const std::string& path);

class WatchedFile {
 public:
  explicit WatchedFile(std::string path) : path_(std::move(path)) {}
  // True with the new bytes in `bytes` when the content differs from the last bytes seen
  // (the first call: always). An error when the file cannot be stat'ed or read (it stays
  // "unseen", so it is tried again). At most `max_bytes` are read (fs::ReadSmallFile).
  Result<bool> Changed(std::string* bytes, uint64_t max_bytes = 1 << 20);
  const std::string& path() const { return path_; }
  const std::string& sha256() const { return sha256_; }  // of the last bytes seen, hex

 private:
  std::string path_;
  FileStamp stamp_;
  bool seen_ = false;
  std::string sha256_;
};

}  // namespace imgtool::admission
