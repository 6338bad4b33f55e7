// Small owners used across imgtool/pkg: libarchive readers and what feeds them, file
// descriptors, and the MD5 hasher dpkg's md5sums need (OpenSSL EVP; MD5 is dpkg's format,
// not our trust anchor: every file is also hashed with SHA-256).
//
// Internal to imgtool/pkg: not part of package.h.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fs/safe_open.h"
#include "oci/reader.h"
#include "oci/result.h"

namespace imgtool::pkg::internal {

struct ArchiveReadFree {
  void operator()(struct archive* a) const { archive_read_free(a); }
};
using ReadArchivePtr = std::unique_ptr<struct archive, ArchiveReadFree>;

using UniqueFd = fs::UniqueFd;

// Feeds a libarchive reader from an oci::Reader, never from a path: the caller opened
// the package file once and every byte libarchive sees comes through that reader.
// Without `size` the bytes are read in order only (Read; libarchive skips by reading,
// so a hashing reader underneath sees every byte). With `size` they are read at offsets
// (ReadAt, seek and skip callbacks), which the zip reader needs for the central
// directory at the end. The reader's own error is kept: libarchive reports only that a
// read failed.
class ArchiveSource {
 public:
  ArchiveSource(oci::Reader& in, std::optional<uint64_t> size) : in_(in), size_(size), buf_(1 << 16) {}
  ArchiveSource(const ArchiveSource&) = delete;
  ArchiveSource& operator=(const ArchiveSource&) = delete;
  // archive_read_open* on `a` with these callbacks; libarchive's result code.
  int OpenOn(struct archive* a);
  // The reader's error when a read failed, else nullopt.
  const std::optional<Error>& read_error() const { return read_error_; }

 private:
  static la_ssize_t ReadCb(struct archive* a, void* ctx, const void** out);
  static la_int64_t SeekCb(struct archive* a, void* ctx, la_int64_t offset, int whence);
  static la_int64_t SkipCb(struct archive* a, void* ctx, la_int64_t request);

  oci::Reader& in_;
  std::optional<uint64_t> size_;
  uint64_t pos_ = 0;
  std::vector<char> buf_;
  std::optional<Error> read_error_;
};

// Streaming MD5, lowercase hex out.
class Md5 {
 public:
  Md5();
  void Update(const void* data, size_t len);
  std::string FinishHex();

 private:
  struct CtxFree {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
  };
  std::unique_ptr<EVP_MD_CTX, CtxFree> ctx_;
};

std::string Quote(std::string_view s);  // oci::Quoted(s): "\"" + s + "\"", escaped, for messages

// libarchive's last error for `a`, or `fallback`: a failed call does not always set one
// (archive_error_string is then NULL, which must never reach a std::string).
std::string ArchiveError(struct archive* a, const char* fallback = "unknown libarchive error");

}  // namespace imgtool::pkg::internal
