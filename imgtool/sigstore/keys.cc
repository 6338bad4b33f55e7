#include "sigstore/keys.h"

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>

#include <optional>

namespace imgtool::sigstore {

namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};

const unsigned char* Bytes(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

std::string CurveName(EVP_PKEY* k) {
  char group[64] = {0};
  size_t len = 0;
  if (EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group), &len) != 1) return "";
  return group;
}

// The hash Sigstore pairs with the key; nullptr for Ed25519 (and for "no such key").
const EVP_MD* HashFor(EVP_PKEY* k) {
  if (EVP_PKEY_is_a(k, "EC")) {
    std::string curve = CurveName(k);
    if (curve == "prime256v1") return EVP_sha256();
    if (curve == "secp384r1") return EVP_sha384();
    if (curve == "secp521r1") return EVP_sha512();
    return nullptr;
  }
  if (EVP_PKEY_is_a(k, "RSA")) return EVP_sha256();
  return nullptr;
}

bool Supported(EVP_PKEY* k) {
  if (EVP_PKEY_is_a(k, "ED25519")) return true;
  if (EVP_PKEY_is_a(k, "RSA")) return EVP_PKEY_get_bits(k) >= 2048 && EVP_PKEY_get_bits(k) <= 8192;
  return HashFor(k) != nullptr;
}

// The next PEM block of `in`: its type and DER body; nullopt at the end (or on junk).
struct PemBlock {
  std::string type, body;
};
std::optional<PemBlock> NextPem(BIO* in) {
  char *name = nullptr, *header = nullptr;
  unsigned char* data = nullptr;
  long len = 0;
  if (PEM_read_bio(in, &name, &header, &data, &len) != 1) {
    ERR_clear_error();  // "no start line" ends every read
    return std::nullopt;
  }
  PemBlock b{name, std::string(reinterpret_cast<char*>(data), static_cast<size_t>(len))};
  OPENSSL_free(name);
  OPENSSL_free(header);
  OPENSSL_free(data);
  return b;
}

std::string BioString(BIO* b) {
  char* data = nullptr;
  long n = BIO_get_mem_data(b, &data);
  return std::string(data, static_cast<size_t>(n));
}

}  // namespace

Result<Pkey> ParsePublicKeyDer(std::string_view der, const std::string& what) {
  const unsigned char* p = Bytes(der);
  EVP_PKEY* k = d2i_PUBKEY(nullptr, &p, static_cast<long>(der.size()));
  if (k == nullptr) {
    // Trusted roots give RSA keys (keyDetails PKCS1_RSA_*) as a bare PKCS#1 RSAPublicKey.
    p = Bytes(der);
    k = d2i_PublicKey(EVP_PKEY_RSA, nullptr, &p, static_cast<long>(der.size()));
  }
  if (k == nullptr) return MakeError(ErrorKind::kInvalidInput, what + ": malformed public key");
  Pkey key(k, sign::PkeyFree());
  if (p != Bytes(der) + der.size()) return MakeError(ErrorKind::kInvalidInput, what + ": bytes after the public key");
  if (!Supported(k)) {
    return MakeError(ErrorKind::kInvalidInput,
                     what + ": unsupported key type (want ECDSA P-256/P-384/P-521, Ed25519 or RSA 2048-8192)");
  }
  return key;
}

Result<Pkey> ParsePublicKeyPemAny(std::string_view pem, const std::string& what) {
  Bio in(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  auto block = NextPem(in.get());
  if (!block) return MakeError(ErrorKind::kInvalidInput, what + ": not a PEM file");
  if (block->type != "PUBLIC KEY") {
    return MakeError(ErrorKind::kInvalidInput, what + ": PEM type is '" + block->type + "', want 'PUBLIC KEY'");
  }
  return ParsePublicKeyDer(block->body, what);
}

Result<Cert> ParseCertificateDer(std::string_view der, const std::string& what) {
  const unsigned char* p = Bytes(der);
  X509* c = d2i_X509(nullptr, &p, static_cast<long>(der.size()));
  if (c == nullptr) return MakeError(ErrorKind::kInvalidInput, what + ": malformed X.509 certificate");
  Cert cert(c, X509Free());
  if (p != Bytes(der) + der.size()) return MakeError(ErrorKind::kInvalidInput, what + ": bytes after the certificate");
  return cert;
}

Result<std::vector<Cert>> ParseCertificatesPem(std::string_view pem, const std::string& what, size_t max_certs) {
  Bio in(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  std::vector<Cert> certs;
  while (auto block = NextPem(in.get())) {
    if (block->type != "CERTIFICATE") {
      return MakeError(ErrorKind::kInvalidInput, what + ": PEM block '" + block->type + "', want 'CERTIFICATE'");
    }
    if (certs.size() == max_certs) {
      return MakeError(ErrorKind::kInvalidInput, what + ": more than " + std::to_string(max_certs) + " certificates");
    }
    auto cert = ParseCertificateDer(block->body, what);
    if (!cert.ok()) return cert.error();
    certs.push_back(*cert);
  }
  if (certs.empty()) return MakeError(ErrorKind::kInvalidInput, what + ": no PEM certificate");
  return certs;
}

std::string CertificateDer(const Cert& cert) {
  unsigned char* der = nullptr;
  int n = i2d_X509(cert.get(), &der);
  if (n <= 0) return "";
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(n));
  OPENSSL_free(der);
  return out;
}

std::string CertificatePem(const Cert& cert) {
  Bio out(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509(out.get(), cert.get()) != 1) return "";
  return BioString(out.get());
}

bool VerifyMessage(const Pkey& key, std::string_view message, std::string_view signature) {
  if (!key) return false;
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  const EVP_MD* md = HashFor(key.get());
  if (md == nullptr && !EVP_PKEY_is_a(key.get(), "ED25519")) return false;
  return EVP_DigestVerifyInit(ctx.get(), nullptr, md, nullptr, key.get()) == 1 &&
         EVP_DigestVerify(ctx.get(), Bytes(signature), signature.size(), Bytes(message), message.size()) == 1;
}

bool VerifyDigest(const Pkey& key, HashAlgorithm alg, std::string_view digest, std::string_view signature) {
  if (!key || EVP_PKEY_is_a(key.get(), "ED25519") || !Supported(key.get())) return false;
  const EVP_MD* md = EvpMd(alg);
  if (digest.size() != DigestSize(alg)) return false;
  std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> ctx(EVP_PKEY_CTX_new(key.get(), nullptr));
  if (!ctx || EVP_PKEY_verify_init(ctx.get()) != 1 || EVP_PKEY_CTX_set_signature_md(ctx.get(), md) != 1) return false;
  if (EVP_PKEY_is_a(key.get(), "RSA") && EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_PADDING) != 1) return false;
  return EVP_PKEY_verify(ctx.get(), Bytes(signature), signature.size(), Bytes(digest), digest.size()) == 1;
}

std::string Sha256(std::string_view bytes) {
  unsigned char out[SHA256_DIGEST_LENGTH];
  SHA256(Bytes(bytes), bytes.size(), out);
  return std::string(reinterpret_cast<char*>(out), sizeof(out));
}

std::string PublicKeyDer(const Pkey& key) {
  unsigned char* der = nullptr;
  int n = i2d_PUBKEY(key.get(), &der);
  if (n <= 0) return "";
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(n));
  OPENSSL_free(der);
  return out;
}

std::string KeyId(const Pkey& key) { return Sha256(PublicKeyDer(key)); }

}  // namespace imgtool::sigstore
