// Opening files that someone else laid out (an image layout, an extracted archive)
// without following them anywhere: every component below the root is opened with
// O_NOFOLLOW, the file itself with O_NONBLOCK (a FIFO cannot stall the open), and it
// must be a regular file. So a blob that is a symlink to ~/.ssh/id_rsa, a FIFO or
// /dev/zero is refused with the reason instead of being read, sent or waited on. Files a
// user names get the same open without the folder walk (OpenRegular).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "oci/reader.h"
#include "oci/result.h"

namespace imgtool::fs {

// Owns a file descriptor: closed on scope exit (the one such class in imgtool).
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return fd_ >= 0; }
  // Closes what it holds and takes `fd` (none by default).
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Opens `root`/`relative` ("blobs/sha256/ab12..") for reading: `root` is followed as the
// user named it, nothing below it is. kNotFound when it does not exist; kInvalidInput
// naming what it is when it is a symlink, a folder, a FIFO, a device or a socket.
// `size` (when not null) receives its size.
Result<UniqueFd> OpenRegularBeneath(const std::string& root, const std::string& relative, uint64_t* size = nullptr);

// Opens a file a user named (a key, a spec, a policy): `path` is followed as given,
// symlinks included, but the open never waits (O_NONBLOCK: a FIFO with no writer would
// block it) and anything but a regular file is refused: "reading PATH: a FIFO, not a
// regular file" (kInvalidInput). kNotFound when it does not exist.
Result<UniqueFd> OpenRegular(const std::string& path, uint64_t* size = nullptr);

// Opens `path` whose last component is expected to be a regular file (planning saw one
// there): its folders are followed as given, the file itself is not (O_NOFOLLOW), and
// the open never waits. A symlink, FIFO, folder or device there now is kInvalidInput
// ("PATH: is a symlink; refused"), so a name swapped since it was looked at is refused
// instead of read through. kNotFound when it does not exist.
Result<UniqueFd> OpenRegularNoFollow(const std::string& path, uint64_t* size = nullptr);

// Reads a small file the same way; more than max_bytes is refused.
Result<std::string> ReadRegularBeneath(const std::string& root, const std::string& relative, uint64_t max_bytes);

// A Reader over an open file: Read moves through it, ReadAt uses pread.
class FdReader : public oci::Reader {
 public:
  explicit FdReader(UniqueFd fd) : fd_(std::move(fd)) {}
  Result<size_t> Read(void* buf, size_t n) override;
  bool CanReadAt() const override { return true; }
  Result<size_t> ReadAt(uint64_t offset, void* buf, size_t n) override;
  int fd() const { return fd_.get(); }

 private:
  UniqueFd fd_;
};

}  // namespace imgtool::fs
