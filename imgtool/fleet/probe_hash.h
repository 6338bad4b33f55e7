// Library hashes for the probe: the sha256 of each file, streamed in 1 MiB reads, the
// largest files first on up to one thread per core, and a hash cache so that a warm probe
// costs one stat per library. Not a content store: entries say "this file, as it was at
// this (device, inode, size, mtime, ctime), had this digest", nothing more.
//
// Why the key is enough: a library is replaced by writing a new file (new inode or new
// ctime) or rewritten in place (new ctime; ctime cannot be set by users). The one gap is
// a write within the file system's timestamp tick right after we hashed (git's "racy"
// case), so entries whose ctime or mtime is younger than racy_window are not stored.
// The cache file is the user's own: one owned by someone else, or writable by group or
// others, is ignored, as is one that does not parse (the libraries are then re-hashed).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "oci/digest.h"
#include "oci/result.h"

namespace imgtool::fleet {

// One version of one file on this node.
struct FileKey {
  std::string path;  // a real path (no symlinks)
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  friend bool operator==(const FileKey&, const FileKey&) = default;
};

// stat(path): kNotFound / kInternal naming the path; a non-regular file is kInvalidInput.
Result<FileKey> StatFileKey(const std::string& path);

class HashCache {
 public:
  // A disabled cache: finds nothing, saves nothing.
  HashCache() = default;
  // <dir>/hashes.json; a missing file is an empty cache, an untrusted or corrupt one is
  // an empty cache with a note saying why (it is overwritten on Save).
  static HashCache Load(const std::string& dir);

  bool enabled() const { return !dir_.empty(); }
  const std::string& file() const { return file_; }
  const std::vector<std::string>& notes() const { return notes_; }
  std::chrono::nanoseconds racy_window{std::chrono::milliseconds(100)};

  std::optional<oci::Digest> Find(const FileKey& key);
  // Stores unless the file is younger than racy_window (then returns false).
  bool Put(const FileKey& key, const oci::Digest& digest);
  // Atomically rewrites the file when Put added something. At most kMaxEntries are kept:
  // beyond that, entries not used since Load are dropped.
  Status Save();

  static constexpr size_t kMaxEntries = 1024;

 private:
  struct Entry {
    FileKey key;
    oci::Digest digest;
    bool used = false;
  };
  std::string dir_;
  std::string file_;
  std::map<std::string, Entry> entries_;  // by real path
  std::vector<std::string> notes_;
  bool dirty_ = false;
};

struct FileHash {
  std::string path;
  oci::Digest digest;  // empty when error is set
  bool cached = false;
  std::string error;  // "reading /x: Permission denied"
};

// Hashes every path (real paths; order kept in the result) on up to
// min(fs::UsableCpus(), uncached files) threads, consulting and filling `cache`.
// A file that changed while it was read gets its digest but no cache entry.
std::vector<FileHash> HashFiles(const std::vector<std::string>& paths, HashCache& cache);

}  // namespace imgtool::fleet
