#include "sign/encrypted_key.h"

#include <sodium.h>

#include "oci/canonical_json.h"
#include "sign/base64.h"

namespace imgtool::sign {

namespace {

constexpr size_t kSaltBytes = 32;

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
  return Base64Decode(obj[key].get<std::string>(), where + "." + key);
}

}  // namespace

Result<std::string> SealWithPassword(std::string_view plaintext, std::string_view password,
                                     const ScryptParams& params) {
  IMGTOOL_TRY(SodiumReady());
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
         std::to_string(params.r) + R"(,"p":)" + std::to_string(params.p) + R"(},"salt":")" + Base64Encode(salt) +
         R"("},"cipher":{"name":"nacl/secretbox","nonce":")" + Base64Encode(nonce) + R"("},"ciphertext":")" +
         Base64Encode(sealed) + R"("})";
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
  auto is = [](const oci::Json& v, std::string_view s) {
    return v.is_string() && v.get_ref<const std::string&>() == s;
  };
  const oci::Json& kdf = member(*j, "kdf");
  const oci::Json& cipher = member(*j, "cipher");
  if (!is(member(kdf, "name"), "scrypt")) {
    return MakeError(ErrorKind::kInvalidInput, what + ": $.kdf.name: want scrypt");
  }
  if (!is(member(cipher, "name"), "nacl/secretbox")) {
    return MakeError(ErrorKind::kInvalidInput, what + ": $.cipher.name: want nacl/secretbox");
  }
  const oci::Json& pj = member(kdf, "params");
  auto num = [&](const char* k) -> uint64_t {
    const oci::Json& v = member(pj, k);
    return v.is_number_unsigned() ? v.get<uint64_t>() : 0;
  };
  // Checked before narrowing: r = 2^32 + 1 must not pass as r = 1.
  uint64_t n = num("N"), r = num("r"), par = num("p");
  if (n < 2 || n > limits.max_n || (n & (n - 1)) != 0 || r < 1 || r > limits.max_r || par < 1 || par > limits.max_p) {
    return MakeError(ErrorKind::kInvalidInput, what + ": $.kdf.params: scrypt N/r/p out of range");
  }
  ScryptParams p{n, static_cast<uint32_t>(r), static_cast<uint32_t>(par)};
  auto salt = B64Field(kdf, "salt", what + ": $.kdf");
  if (!salt.ok()) return salt.error();
  auto nonce = B64Field(cipher, "nonce", what + ": $.cipher");
  if (!nonce.ok()) return nonce.error();
  auto sealed = B64Field(*j, "ciphertext", what + ": $");
  if (!sealed.ok()) return sealed.error();
  if (nonce->size() != crypto_secretbox_NONCEBYTES || sealed->size() < crypto_secretbox_MACBYTES) {
    return MakeError(ErrorKind::kInvalidInput, what + ": nonce or ciphertext has the wrong length");
  }
  auto key = DeriveKey(password, *salt, p);
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
