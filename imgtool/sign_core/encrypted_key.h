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

// What cosign writes (go-securesystemslib's default). Files name their own parameters;
// reading honours them up to these values and no further.
struct ScryptParams {
  uint64_t n = 65536;
  uint32_t r = 8;
  uint32_t p = 1;
};

// The JSON document (the PEM body) sealing `plaintext` under `password`. Parameters beyond
// cosign's are kInvalidInput (OpenWithPassword would refuse the result).
Result<std::string> SealWithPassword(std::string_view plaintext, std::string_view password,
                                     const ScryptParams& params = {});
// The most scrypt work a key file may ask for: the file names N, r and p, and scrypt runs
// before the password can be checked, so a hostile one must not be able to ask for more
// memory (128 * N * r bytes) or time than this. The defaults are what cosign writes
// (go-securesystemslib's N=2^16 r=8 p=1: 64 MiB, about 0.1 s; older cosign wrote N=2^15);
// N=2^20 r=32 p=16 would be 4 GiB and over a minute. The fuzzer passes lower caps.
struct ScryptLimits {
  uint64_t max_n = uint64_t{1} << 16;
  uint64_t max_r = 8;
  uint64_t max_p = 1;
};

// The plaintext; a wrong password (or a damaged file: secretbox cannot tell) is kDenied.
// Refused with kInvalidInput before any scrypt work: N, r or p above `limits`, N not a power
// of two; a salt over 64 bytes, a nonce that is not 24 bytes, a ciphertext over 16 KiB.
Result<std::string> OpenWithPassword(std::string_view sealed_json, std::string_view password, const std::string& what,
                                     const ScryptLimits& limits = {});

}  // namespace imgtool::sign
