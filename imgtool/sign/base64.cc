#include "sign/base64.h"

#include <sodium.h>

namespace imgtool::sign {

std::string Base64Encode(std::string_view bytes) {
  const int variant = sodium_base64_VARIANT_ORIGINAL;
  std::string out(sodium_base64_encoded_len(bytes.size(), variant), '\0');
  sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                    variant);
  out.resize(out.size() - 1);  // the terminating NUL sodium counts in the length
  return out;
}

Result<std::string> Base64Decode(std::string_view text, const std::string& what) {
  std::string out(text.size() / 4 * 3 + 3, '\0');
  size_t len = 0;
  const char* end = nullptr;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), text.data(), text.size(), nullptr,
                        &len, &end, sodium_base64_VARIANT_ORIGINAL) != 0 ||
      end != text.data() + text.size()) {
    return MakeError(ErrorKind::kInvalidInput, what + ": not base64");
  }
  out.resize(len);
  return out;
}

}  // namespace imgtool::sign
