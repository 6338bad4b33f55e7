#include "oci/base64.h"

#include <openssl/evp.h>

#include <climits>

namespace imgtool::oci {

std::string Base64Encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

Result<std::string> Base64Decode(std::string_view text, const std::string& what) {
  auto refused = [&] { return MakeError(ErrorKind::kInvalidInput, what + ": not base64"); };
  if (text.size() % 4 != 0 || text.size() > INT_MAX) return refused();
  std::string out(text.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  // EVP_DecodeBlock writes a zero byte for each '=' and skips blanks at either end.
  size_t pad = text.size() >= 2 ? (text.back() == '=') + (text[text.size() - 2] == '=') : 0;
  if (n < 0 || static_cast<size_t>(n) < pad) return refused();
  out.resize(static_cast<size_t>(n) - pad);
  // Canonical only: what decodes must encode back to exactly the text.
  if (Base64Encode(out) != text) return refused();
  return out;
}

}  // namespace imgtool::oci
