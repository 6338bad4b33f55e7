#include "core/sha256.h"

#include <openssl/evp.h>

#include <memory>

namespace trainer {

Sha256Bytes Sha256(const void* data, size_t size) {
  Sha256Bytes out{};
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  unsigned int len = 0;
  // EVP on a fixed digest cannot fail short of allocation failure; out stays zero then.
  if (ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1 && EVP_DigestUpdate(ctx.get(), data, size) == 1) {
    EVP_DigestFinal_ex(ctx.get(), out.data(), &len);
  }
  return out;
}

std::string HexOf(const Sha256Bytes& digest) {
  static const char* kHex = "0123456789abcdef";
  std::string s;
  s.reserve(64);
  for (uint8_t b : digest) {
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 15]);
  }
  return s;
}

}  // namespace trainer
