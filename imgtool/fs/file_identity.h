// A file's stat identity: device, inode, size, mtime and ctime (nanoseconds). A cache
// records it when it has just hashed a file; the same identity later means the bytes are
// the ones hashed, without reading them again, because every write to a file moves its
// mtime and ctime, and ctime cannot be set back by anyone but root (utimensat sets
// mtime, and moves ctime to now). A file replaced by another (rename, a new inode, even
// one reusing the number) has another ctime too. Link, unlink and chmod also move ctime:
// the identity is then stale and the file is hashed once more, never trusted wrongly.
//
// Sound only for a file that nobody else can write (fs::OnlyWeCanWrite): for one that
// others can write, a write racing the stat could land in the same timestamp tick.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>

namespace imgtool::fs {

struct FileIdentity {
  uint64_t dev = 0, ino = 0, size = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;

  static FileIdentity Of(const struct stat& st);
  // "dev D ino I size S mtime N ctime N", and back (nullopt for anything else).
  std::string str() const;
  static std::optional<FileIdentity> Parse(const std::string& text);
  bool operator==(const FileIdentity&) const = default;
};

}  // namespace imgtool::fs
