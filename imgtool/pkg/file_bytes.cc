#include "pkg/file_bytes.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "pkg/safe_extract.h"

namespace imgtool::pkg::internal {

namespace {

Error Sys(const std::string& what) {
  int e = errno;
  return MakeError(ErrorKind::kInternal, what + ": " + std::strerror(e));
}

}  // namespace

Status FileBytes::Data(const void* data, size_t len) {
  sha_.Update(data, len);
  md5_.Update(data, len);
  IMGTOOL_TRY(WriteAll(fd_, data, len, what_));
  size_ += len;
  return Status::Ok();
}

Status FileBytes::Zeros(uint64_t n) {
  if (n == 0) return Status::Ok();
  static const char kZeros[1 << 16] = {};
  for (uint64_t left = n; left > 0;) {
    size_t chunk = left < sizeof kZeros ? static_cast<size_t>(left) : sizeof kZeros;
    sha_.Update(kZeros, chunk);
    md5_.Update(kZeros, chunk);
    left -= chunk;
  }
  // Seeking past the end leaves a hole: 64 MiB of zeros cost no disk in staging.
  if (::lseek(fd_, static_cast<off_t>(n), SEEK_CUR) < 0) return Sys("seeking in " + what_);
  size_ += n;
  return Status::Ok();
}

Status FileBytes::Finish() {
  if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) return Sys("sizing " + what_);
  return Status::Ok();
}

}  // namespace imgtool::pkg::internal
