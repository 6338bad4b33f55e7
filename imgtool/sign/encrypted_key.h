// The password envelope of cosign private keys (go-securesystemslib's "encrypted"
// format, inside PEM "ENCRYPTED SIGSTORE PRIVATE KEY"):
//   {"kdf":{"name":"scrypt","params":{"N":..,"r":..,"p":..},"salt":"<b64>"},
//    "cipher":{"name":"nacl/secretbox","nonce":"<b64>"},"ciphertext":"<b64>"}
// The key is scrypt(password, salt) (32 bytes); ciphertext is secretbox(PKCS#8 DER).
// Not here: PEM armour and what the plaintext means (keys.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "oci/result.h"

namespace imgtool::sign {

struct ScryptParams {
  uint64_t n = 65536;  // cosign's keys name their own; reading honours what the file says
  uint32_t r = 8;
  uint32_t p = 1;
};

// The JSON document (the PEM body) sealing `plaintext` under `password`.
Result<std::string> SealWithPassword(std::string_view plaintext, std::string_view password,
                                     const ScryptParams& params = {});
// The most scrypt work a key file may ask for: the file names N, r and p, so a hostile
// one must not be able to ask for more memory (128 * N * r bytes) or time than this.
// Callers that read only keys they made (tests, the fuzzer) pass lower caps.
struct ScryptLimits {
  uint64_t max_n = uint64_t{1} << 20;
  uint32_t max_r = 32;
  uint32_t max_p = 16;
};

// The plaintext; a wrong password (or a damaged file: secretbox cannot tell) is kDenied.
// Parameters beyond `limits` are kInvalidInput, before any scrypt work.
Result<std::string> OpenWithPassword(std::string_view sealed_json, std::string_view password, const std::string& what,
                                     const ScryptLimits& limits = {});

}  // namespace imgtool::sign
