#include "pkg/handles.h"

#include <array>

#include "oci/quote.h"

namespace imgtool::pkg::internal {

Md5::Md5() : ctx_(EVP_MD_CTX_new()) {
  // Only allocation can fail here, and the default provider always has MD5; a failure
  // shows up as a wrong digest, which every caller compares against something.
  if (ctx_) EVP_DigestInit_ex(ctx_.get(), EVP_md5(), nullptr);
}

void Md5::Update(const void* data, size_t len) {
  if (ctx_) EVP_DigestUpdate(ctx_.get(), data, len);
}

std::string Md5::FinishHex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> raw{};
  unsigned int n = 0;
  if (ctx_) EVP_DigestFinal_ex(ctx_.get(), raw.data(), &n);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (unsigned int i = 0; i < n; ++i) {
    out.push_back(kHex[raw[i] >> 4]);
    out.push_back(kHex[raw[i] & 15]);
  }
  return out;
}

std::string Quote(std::string_view s) { return oci::Quoted(s); }

std::string ArchiveError(struct archive* a, const char* fallback) {
  const char* msg = archive_error_string(a);
  return msg != nullptr ? msg : fallback;
}

}  // namespace imgtool::pkg::internal
