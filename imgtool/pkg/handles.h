// Small owners used across imgtool/pkg: libarchive readers, file descriptors, and the
// MD5 hasher dpkg's md5sums need (OpenSSL EVP; MD5 is dpkg's format, not our trust anchor:
// every file is also hashed with SHA-256).
//
// Internal to imgtool/pkg: not part of package.h.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "fs/safe_open.h"

namespace imgtool::pkg::internal {

struct ArchiveReadFree {
  void operator()(struct archive* a) const { archive_read_free(a); }
};
using ReadArchivePtr = std::unique_ptr<struct archive, ArchiveReadFree>;

using UniqueFd = fs::UniqueFd;

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
