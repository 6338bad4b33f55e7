// Public keys of any type a Sigstore trusted root or bundle names (ECDSA P-256/384/521,
// Ed25519, RSA PKCS#1 v1.5), and how to check a signature with each. Over a message the
// hash goes with the key, as Sigstore's key details say: SHA-256 for P-256 and RSA,
// SHA-384 for P-384, SHA-512 for P-521, none for Ed25519 (it signs the message itself).
// Over a digest the caller names the hash (what the bundle and its log entry say).
#pragma once

#include <openssl/x509.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "oci/result.h"
#include "sign_core/keys.h"
#include "sigstore/hash.h"

namespace imgtool::sigstore {

using sign::Pkey;

struct X509Free {
  void operator()(X509* c) const { X509_free(c); }
};
using Cert = std::shared_ptr<X509>;  // shared: certificates are immutable once parsed

// DER SubjectPublicKeyInfo -> key; refuses trailing bytes and key types not listed above.
Result<Pkey> ParsePublicKeyDer(std::string_view der, const std::string& what);
// (A bare PKCS#1 RSAPublicKey is taken too: trusted roots write RSA keys so.)
// PEM "PUBLIC KEY" of any listed type (sign::ParsePublicKeyPem takes P-256 only).
Result<Pkey> ParsePublicKeyPemAny(std::string_view pem, const std::string& what);
// DER X.509 certificate; refuses trailing bytes.
Result<Cert> ParseCertificateDer(std::string_view der, const std::string& what);
// Every "CERTIFICATE" block of a PEM text, in order (cosign's certificate and chain
// annotations); at most `max_certs`, none is an error.
Result<std::vector<Cert>> ParseCertificatesPem(std::string_view pem, const std::string& what, size_t max_certs = 8);
// The certificate's DER bytes.
std::string CertificateDer(const Cert& cert);
// PEM "CERTIFICATE" text of a certificate.
std::string CertificatePem(const Cert& cert);

// `signature` over `message` with the key's hash (see above). False on any failure.
bool VerifyMessage(const Pkey& key, std::string_view message, std::string_view signature);
// `signature` over a message whose `alg` digest is `digest` (ECDSA: of any curve, as
// sigstore-go and sigstore-python verify a P-384 key's signature of a sha256 digest; RSA:
// PKCS#1 v1.5, whose DigestInfo names `alg`). False for Ed25519, which cannot verify a
// digest, and for a digest of the wrong length.
bool VerifyDigest(const Pkey& key, HashAlgorithm alg, std::string_view digest, std::string_view signature);

// sha256 of the bytes, raw (32 bytes).
std::string Sha256(std::string_view bytes);
// The key's DER SubjectPublicKeyInfo ("" if it cannot be encoded).
std::string PublicKeyDer(const Pkey& key);
// The log ID Rekor and CT logs use: sha256 of the key's DER SubjectPublicKeyInfo.
std::string KeyId(const Pkey& key);

}  // namespace imgtool::sigstore
