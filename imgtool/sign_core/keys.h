// ECDSA P-256 keys in cosign's files: the public key as PEM "PUBLIC KEY" (SPKI), the
// private key as PKCS#8 DER sealed with a password (encrypted_key.h) inside PEM
// "ENCRYPTED SIGSTORE PRIVATE KEY" (older cosign: "ENCRYPTED COSIGN PRIVATE KEY").
// Signing is ECDSA over SHA-256 with ASN.1 DER signatures, as cosign does.
// Not here: where passwords come from (password.h), what is signed (payload.h).
#pragma once

#include <openssl/evp.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "oci/result.h"
#include "sign_core/encrypted_key.h"

namespace imgtool::sign {

struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Pkey = std::shared_ptr<EVP_PKEY>;  // shared: keys are immutable once loaded

inline constexpr std::string_view kSigstorePrivateKeyPem = "ENCRYPTED SIGSTORE PRIVATE KEY";
inline constexpr std::string_view kCosignPrivateKeyPem = "ENCRYPTED COSIGN PRIVATE KEY";

Result<Pkey> GenerateP256Key();

// PEM "PUBLIC KEY" of a key (public or private).
Result<std::string> PublicKeyPem(const Pkey& key);
// Only ECDSA P-256 keys are accepted; `what` names the file in errors.
Result<Pkey> ParsePublicKeyPem(std::string_view pem, const std::string& what);
Result<Pkey> LoadPublicKeyFile(const std::string& path);

Result<std::string> EncryptedPrivateKeyPem(const Pkey& key, std::string_view password, const ScryptParams& params = {});
// A PEM larger than kMaxPrivateKeyPem is kInvalidInput before it is decoded; the
// envelope's own limits are OpenWithPassword's (encrypted_key.h), with
// `limits` the scrypt work the file may ask for.
inline constexpr size_t kMaxPrivateKeyPem = 32 << 10;
Result<Pkey> ParseEncryptedPrivateKeyPem(std::string_view pem, std::string_view password, const std::string& what,
                                         const ScryptLimits& limits = {});

// ECDSA/SHA-256, DER-encoded.
Result<std::string> SignSha256(const Pkey& key, std::string_view message);
// True only for a strict DER signature that verifies; false for anything else.
bool VerifySha256(const Pkey& key, std::string_view message, std::string_view der_signature);
// Whether `der` is a strict DER ECDSA-Sig-Value (for a precise reason when it is not).
bool IsDerEcdsaSignature(std::string_view der);

}  // namespace imgtool::sign
