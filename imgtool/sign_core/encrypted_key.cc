#include "sign_core/encrypted_key.h"

#include <sodium.h>

#include "oci/base64.h"
#include "oci/canonical_json.h"

namespace imgtool::sign {

namespace {

constexpr size_t kSaltBytes = 32;
// Sizes: cosign writes a 32-byte salt and a 24-byte nonce; a P-256 PKCS#8 key seals to
// about 150 bytes, so 16 KiB of ciphertext leaves room for any key cosign makes.
constexpr size_t kMaxSaltBytes = 64;
constexpr size_t kMaxSealedBytes = 16 << 10;

Status SodiumReady() {
  if (sodium_init() < 0) return MakeError(ErrorKind::kInternal, "libsodium failed to initialise");
  return Status::Ok();
}

Result<std::string> DeriveKey(std::string_view password, std::string_view salt, const ScryptParams& p) {
  std::string key(crypto_secretbox_KEYBYTES, '\0');
  if (crypto_pwhash_scryptsalsa208sha256_ll(reinterpret_cast<const uint8_t*>(password.data()), password.size(),
                                            reinterpret_cast<const uint8_t*>(salt.data()), salt.size(), p.n, p.r, p.p,
                                            reinterpret_cast<uint8_t*>(key.data()), key.size()) != 0) {
    return MakeError(ErrorKind::kInternal, "scrypt failed (out of memory?)");
  }
  return key;
}

std::string RandomBytes(size_t n) {
  std::string s(n, '\0');
  randombytes_buf(s.data(), s.size());
  return s;
}

Result<std::string> B64Field(const oci::Json& obj, const char* key, const std::string& where) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_string()) {
    return MakeError(ErrorKind::kInvalidInput, where + "." + key + ": missing or not a string");
  }
  return oci::Base64Decode(obj[key].get<std::string>(), where + "." + key);
}

std::string ParamsText(uint64_t n, uint64_t r, uint64_t p) {
  return "N=" + std::to_string(n) + " r=" + std::to_string(r) + " p=" + std::to_string(p);
}

// Refused unless N is a power of two and every factor is within `limits` (by default what
// cosign writes). Checked before narrowing: r = 2^32 + 8 must not pass as r = 8.
Status CheckParams(uint64_t n, uint64_t r, uint64_t p, const std::string& what, const ScryptLimits& limits) {
  if (n < 2 || (n & (n - 1)) != 0 || r < 1 || p < 1) {
    return MakeError(ErrorKind::kInvalidInput, what + ": $.kdf.params: scrypt " + ParamsText(n, r, p) +
                                                   " is not valid (N a power of two, r and p at least 1)");
  }
  if (n > limits.max_n || r > limits.max_r || p > limits.max_p) {
    return MakeError(ErrorKind::kInvalidInput, what + ": $.kdf.params: scrypt " + ParamsText(n, r, p) +
                                                   " asks for more work than cosign's keys (at most " +
                                                   ParamsText(limits.max_n, limits.max_r, limits.max_p) + ")");
  }
  return Status::Ok();
}

// The file's parameters; a missing or non-integer factor reads as 0 (refused).
Result<ScryptParams> CheckedParams(const oci::Json& pj, const std::string& what, const ScryptLimits& limits) {
  auto num = [&](const char* k) -> uint64_t {
    return pj.is_object() && pj.contains(k) && pj[k].is_number_unsigned() ? pj[k].get<uint64_t>() : 0;
  };
  uint64_t n = num("N"), r = num("r"), p = num("p");
  IMGTOOL_TRY(CheckParams(n, r, p, what, limits));
  return ScryptParams{n, static_cast<uint32_t>(r), static_cast<uint32_t>(p)};
}

Status CheckSizes(const std::string& salt, const std::string& nonce, const std::string& sealed,
                  const std::string& what) {
  if (salt.empty() || salt.size() > kMaxSaltBytes) {
    return MakeError(ErrorKind::kInvalidInput, what + ": $.kdf.salt: " + std::to_string(salt.size()) +
                                                   " bytes, want 1 to " + std::to_string(kMaxSaltBytes));
  }
  if (nonce.size() != crypto_secretbox_NONCEBYTES) {
    return MakeError(ErrorKind::kInvalidInput, what + ": $.cipher.nonce: " + std::to_string(nonce.size()) +
                                                   " bytes, want " + std::to_string(crypto_secretbox_NONCEBYTES));
  }
  if (sealed.size() < crypto_secretbox_MACBYTES || sealed.size() > kMaxSealedBytes) {
    return MakeError(ErrorKind::kInvalidInput, what + ": $.ciphertext: " + std::to_string(sealed.size()) +
                                                   " bytes, want " + std::to_string(crypto_secretbox_MACBYTES) +
                                                   " to " + std::to_string(kMaxSealedBytes));
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> SealWithPassword(std::string_view plaintext, std::string_view password,
                                     const ScryptParams& params) {
  IMGTOOL_TRY(SodiumReady());
  // A key we could not read back is no key.
  IMGTOOL_TRY(CheckParams(params.n, params.r, params.p, "sealing a key", ScryptLimits{}));
  std::string salt = RandomBytes(kSaltBytes);
  std::string nonce = RandomBytes(crypto_secretbox_NONCEBYTES);
  auto key = DeriveKey(password, salt, params);
  if (!key.ok()) return key.error();
  std::string sealed(plaintext.size() + crypto_secretbox_MACBYTES, '\0');
  crypto_secretbox_easy(reinterpret_cast<uint8_t*>(sealed.data()), reinterpret_cast<const uint8_t*>(plaintext.data()),
                        plaintext.size(), reinterpret_cast<const uint8_t*>(nonce.data()),
                        reinterpret_cast<const uint8_t*>(key->data()));
  sodium_memzero(key->data(), key->size());
  // Go's field order (struct order, not sorted), so our files read like cosign's.
  return R"({"kdf":{"name":"scrypt","params":{"N":)" + std::to_string(params.n) + R"(,"r":)" +
         std::to_string(params.r) + R"(,"p":)" + std::to_string(params.p) + R"(},"salt":")" + oci::Base64Encode(salt) +
         R"("},"cipher":{"name":"nacl/secretbox","nonce":")" + oci::Base64Encode(nonce) + R"("},"ciphertext":")" +
         oci::Base64Encode(sealed) + R"("})";
}

Result<std::string> OpenWithPassword(std::string_view sealed_json, std::string_view password, const std::string& what,
                                     const ScryptLimits& limits) {
  IMGTOOL_TRY(SodiumReady());
  auto j = oci::ParseJson(sealed_json, what);
  if (!j.ok()) return j.error();
  if (!j->is_object()) return MakeError(ErrorKind::kInvalidInput, what + ": $: want a JSON object");
  // Members by type, never value(): it throws on a wrong type, and the file is anyone's.
  auto member = [](const oci::Json& obj, const char* key) -> const oci::Json& {
    static const oci::Json kAbsent;
    if (!obj.is_object()) return kAbsent;
    auto it = obj.find(key);
    return it != obj.end() ? *it : kAbsent;
  };
  const oci::Json& kdf = member(*j, "kdf");
  const oci::Json& cipher = member(*j, "cipher");
  if (oci::StringMember(kdf, "name") != "scrypt") {
    return MakeError(ErrorKind::kInvalidInput, what + ": $.kdf.name: want scrypt");
  }
  if (oci::StringMember(cipher, "name") != "nacl/secretbox") {
    return MakeError(ErrorKind::kInvalidInput, what + ": $.cipher.name: want nacl/secretbox");
  }
  auto p = CheckedParams(member(kdf, "params"), what, limits);
  if (!p.ok()) return p.error();
  auto salt = B64Field(kdf, "salt", what + ": $.kdf");
  if (!salt.ok()) return salt.error();
  auto nonce = B64Field(cipher, "nonce", what + ": $.cipher");
  if (!nonce.ok()) return nonce.error();
  auto sealed = B64Field(*j, "ciphertext", what + ": $");
  if (!sealed.ok()) return sealed.error();
  IMGTOOL_TRY(CheckSizes(*salt, *nonce, *sealed, what));
  auto key = DeriveKey(password, *salt, *p);
  if (!key.ok()) return key.error();
  std::string plain(sealed->size() - crypto_secretbox_MACBYTES, '\0');
  int rc = crypto_secretbox_open_easy(
      reinterpret_cast<uint8_t*>(plain.data()), reinterpret_cast<const uint8_t*>(sealed->data()), sealed->size(),
      reinterpret_cast<const uint8_t*>(nonce->data()), reinterpret_cast<const uint8_t*>(key->data()));
  sodium_memzero(key->data(), key->size());
  if (rc != 0) {
    return MakeError(ErrorKind::kDenied, what + ": wrong password (or the key file was altered)");
  }
  return plain;
}

}  // namespace imgtool::sign
