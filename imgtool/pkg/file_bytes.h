// FileBytes: one regular file of a package as it lands in staging, hashed in file order
// (SHA-256 for us, MD5 for dpkg's md5sums) over exactly the bytes the file then holds:
// data, and the zeros of a sparse entry's holes. The hashes describe the file in the
// image, whatever shape the archive gave it.
//
// Internal to imgtool/pkg: not part of package.h.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "oci/digest.h"
#include "oci/result.h"
#include "pkg/handles.h"

namespace imgtool::pkg::internal {

class FileBytes {
 public:
  // `fd`: a new, empty file open for writing; `what` names it in errors.
  FileBytes(int fd, std::string what) : fd_(fd), what_(std::move(what)) {}

  Status Data(const void* data, size_t len);
  // `n` zero bytes: a hole on disk (the file system reads it as zeros), hashed as zeros.
  Status Zeros(uint64_t n);
  // Sets the file's length, so a hole at the end is part of it.
  Status Finish();

  uint64_t size() const { return size_; }
  oci::Digest sha256() { return sha_.Finish(); }
  std::string md5_hex() { return md5_.FinishHex(); }

 private:
  int fd_;
  std::string what_;
  uint64_t size_ = 0;
  oci::Sha256 sha_;
  Md5 md5_;
};

}  // namespace imgtool::pkg::internal
