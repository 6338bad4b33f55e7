// Digest: "sha256:<64 lowercase hex>", a type so a bare string never stands in for one.
// Sha256: a streaming hasher over OpenSSL EVP (uses SHA-NI where the CPU has it).
#pragma once

#include <openssl/evp.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "oci/result.h"

namespace imgtool::oci {

class Digest {
 public:
  Digest() = default;
  // Parses "sha256:<hex>"; anything else (other algorithms, upper case, wrong length) is an error.
  static Result<Digest> Parse(std::string_view text);
  static Digest FromBytes(const std::array<uint8_t, 32>& raw);
  static Digest Of(std::string_view bytes);

  const std::string& hex() const { return hex_; }
  std::string str() const { return "sha256:" + hex_; }
  std::string algorithm() const { return "sha256"; }
  bool empty() const { return hex_.empty(); }
  // "sha256:ab12cd34ef56" for messages.
  std::string Short() const { return "sha256:" + hex_.substr(0, 12); }

  friend bool operator==(const Digest&, const Digest&) = default;
  // clang-tidy 14 reads the 0 a defaulted <=> compares with as a null pointer constant.
  // NOLINTNEXTLINE(modernize-use-nullptr)
  friend auto operator<=>(const Digest&, const Digest&) = default;

 private:
  std::string hex_;
};

class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t len);
  void Update(std::string_view s) { Update(s.data(), s.size()); }
  Digest Finish();
  uint64_t bytes() const { return bytes_; }

 private:
  struct CtxFree {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
  };
  std::unique_ptr<EVP_MD_CTX, CtxFree> ctx_;
  uint64_t bytes_ = 0;
};

// Hashes a file in one streaming pass; returns digest and size.
struct FileDigest {
  Digest digest;
  uint64_t size = 0;
};
// Hashes a regular file (a package a spec names): opened without waiting, so a FIFO is
// refused at once ("reading PATH: not a regular file", kInvalidInput), never read.
Result<FileDigest> DigestFile(const std::string& path);

}  // namespace imgtool::oci
