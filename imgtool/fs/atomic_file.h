// Atomic outputs: every file imgtool writes goes to a temporary name in the same
// folder, is fsynced, then renamed into place (and the folder fsynced). A crash or
// Ctrl-C leaves either the old file or the new one, never half of one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "fs/safe_open.h"
#include "oci/result.h"

namespace imgtool::fs {

class AtomicFile {
 public:
  AtomicFile() = default;
  ~AtomicFile();  // removes the temporary unless Commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Creates UniqueTempPath(final_path) with O_EXCL | O_NOFOLLOW and `mode` (after the
  // umask) from the start: a secret is written to a file others could never open (a
  // chmod after the create leaves a window in which anyone may open it and keep reading).
  Status Open(const std::string& final_path, unsigned mode = 0644);
  Status Write(const void* data, size_t len);
  Status Write(std::string_view s) { return Write(s.data(), s.size()); }
  // Asks for what follows to go straight to the disk (O_DIRECT), bypassing the page
  // cache: for a big file written once (a layer blob) this saves the copy into the page
  // cache, the largest kernel cost of writing it, and Commit's fsync then has little
  // left to flush. It lasts while every Write is kDirectAlignment-aligned in address and
  // length; the first other one (a last, partial buffer), or a filesystem that refuses
  // O_DIRECT, turns it off again, so no Write fails because of it. Returns whether it is
  // on. The bytes written are the same either way.
  bool WriteDirect();
  static constexpr size_t kDirectAlignment = 4096;
  // The temporary's mode, set through its descriptor (never by its name, which someone
  // who can write the folder could have swapped for a symlink to another of our files).
  Status Chmod(unsigned mode);
  // A descriptor reading the temporary itself (opened through /proc/self/fd: this very
  // file, whatever its name holds by then), for a caller that hands on what it wrote
  // (a download it hashed) without reopening it by name. Call before Commit.
  Result<UniqueFd> ReadBack() const;
  // fsync, rename over final_path, fsync the folder.
  Status Commit();
  // Same, but decides the final name only now (a blob's name is its digest).
  Status CommitAs(const std::string& final_path);
  void Abort();

  const std::string& temp_path() const { return temp_path_; }
  uint64_t bytes_written() const { return written_; }

 private:
  Status WriteDirectly(const char* p, size_t len);
  void SetDirect(bool on);

  int fd_ = -1;
  bool direct_ = false;
  std::string final_path_;
  std::string temp_path_;
  uint64_t written_ = 0;
};

// "<dir>/.tmp-<name>-<random>" beside final_path: a name no other thread or process picks
// (10 random characters from a per-thread generator seeded by std::random_device; pid
// alone collides between threads). Create it with O_EXCL (or link(2), which never
// replaces), never by opening an existing name: a collision then fails instead of
// writing through someone else's file or symlink.
std::string UniqueTempPath(const std::string& final_path);

// Puts the open file `fd` itself at final_path, replacing what was there: a hard link
// made through /proc/self/fd (the file opened, not whatever its name holds now) under a
// UniqueTempPath, then renamed over final_path. kInternal when links are impossible
// there (another filesystem, a file already deleted): the caller copies instead.
Status LinkAtomic(int fd, const std::string& final_path);

Status WriteFileAtomic(const std::string& path, std::string_view contents);
// Reads a whole small file; refuses files larger than max_bytes (hostile input) and
// anything but a regular file, without waiting on a FIFO (OpenRegular in safe_open.h).
Result<std::string> ReadSmallFile(const std::string& path, uint64_t max_bytes = 64u << 20);
// Reads exactly `size` bytes from an open descriptor (for callers that check the file
// with fstat first, on the same descriptor); false on a short read or an error.
bool ReadExactly(int fd, std::string* out, size_t size);
Status FsyncDir(const std::string& dir);
Status MakeDirs(const std::string& dir);
bool Exists(const std::string& path);
Status RemoveTree(const std::string& path);
std::string DirName(const std::string& path);
std::string BaseName(const std::string& path);

}  // namespace imgtool::fs

namespace imgtool::fs {

// A temporary folder removed with everything in it when the object goes away.
class TempDir {
 public:
  TempDir() = default;
  ~TempDir();
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Creates "<parent>/<prefix>XXXXXX"; parent defaults to $TMPDIR or /tmp.
  static Result<TempDir> Create(const std::string& prefix, const std::string& parent = "");
  const std::string& path() const { return path_; }
  // Keeps the folder: the caller renamed it into place.
  void Release() { path_.clear(); }

 private:
  std::string path_;
};

}  // namespace imgtool::fs
