#include "sign_core/keys.h"

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "fs/atomic_file.h"

namespace imgtool::sign {

namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
struct CtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

Error OpensslError(const std::string& what) { return MakeError(ErrorKind::kInternal, what + ": OpenSSL failed"); }

Bio MemBio(std::string_view bytes) { return Bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size()))); }

std::string BioString(BIO* b) {
  char* data = nullptr;
  long n = BIO_get_mem_data(b, &data);
  return std::string(data, static_cast<size_t>(n));
}

// One PEM block of any type: its type name and decoded body.
struct PemBlock {
  std::string type;
  std::string body;
};
Result<PemBlock> ReadPem(std::string_view pem, const std::string& what) {
  Bio in = MemBio(pem);
  char *name = nullptr, *header = nullptr;
  unsigned char* data = nullptr;
  long len = 0;
  if (PEM_read_bio(in.get(), &name, &header, &data, &len) != 1) {
    return MakeError(ErrorKind::kInvalidInput, what + ": not a PEM file");
  }
  PemBlock b{name, std::string(reinterpret_cast<char*>(data), static_cast<size_t>(len))};
  OPENSSL_free(name);
  OPENSSL_free(header);
  OPENSSL_free(data);
  return b;
}

Status CheckP256(EVP_PKEY* k, const std::string& what) {
  char group[64] = {0};
  size_t glen = 0;
  if (!EVP_PKEY_is_a(k, "EC") ||
      EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group), &glen) != 1 ||
      std::string(group) != "prime256v1") {
    return MakeError(ErrorKind::kInvalidInput, what + ": not an ECDSA P-256 key (the only kind imgtool uses)");
  }
  return Status::Ok();
}

}  // namespace

Result<Pkey> GenerateP256Key() {
  EVP_PKEY* k = EVP_EC_gen("P-256");
  if (k == nullptr) return OpensslError("generating a P-256 key");
  return Pkey(k, PkeyFree());
}

Result<std::string> PublicKeyPem(const Pkey& key) {
  Bio out(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PUBKEY(out.get(), key.get()) != 1) return OpensslError("writing public key");
  return BioString(out.get());
}

Result<Pkey> ParsePublicKeyPem(std::string_view pem, const std::string& what) {
  auto block = ReadPem(pem, what);
  if (!block.ok()) return block.error();
  if (block->type != "PUBLIC KEY") {
    return MakeError(ErrorKind::kInvalidInput, what + ": PEM type is '" + block->type + "', want 'PUBLIC KEY'");
  }
  const auto* p = reinterpret_cast<const unsigned char*>(block->body.data());
  EVP_PKEY* k = d2i_PUBKEY(nullptr, &p, static_cast<long>(block->body.size()));
  if (k == nullptr) return MakeError(ErrorKind::kInvalidInput, what + ": malformed public key");
  Pkey key(k, PkeyFree());
  IMGTOOL_TRY(CheckP256(k, what));
  return key;
}

Result<Pkey> LoadPublicKeyFile(const std::string& path) {
  auto pem = fs::ReadSmallFile(path, 64 << 10);
  if (!pem.ok()) return pem.error();
  return ParsePublicKeyPem(*pem, path);
}

Result<std::string> EncryptedPrivateKeyPem(const Pkey& key, std::string_view password, const ScryptParams& params) {
  unsigned char* der = nullptr;
  PKCS8_PRIV_KEY_INFO* p8 = EVP_PKEY2PKCS8(key.get());
  if (p8 == nullptr) return OpensslError("encoding private key");
  int len = i2d_PKCS8_PRIV_KEY_INFO(p8, &der);
  PKCS8_PRIV_KEY_INFO_free(p8);
  if (len <= 0) return OpensslError("encoding private key");
  std::string plain(reinterpret_cast<char*>(der), static_cast<size_t>(len));
  OPENSSL_clear_free(der, static_cast<size_t>(len));
  auto sealed = SealWithPassword(plain, password, params);
  OPENSSL_cleanse(plain.data(), plain.size());
  if (!sealed.ok()) return sealed.error();
  Bio out(BIO_new(BIO_s_mem()));
  std::string type(kSigstorePrivateKeyPem);
  if (PEM_write_bio(out.get(), type.c_str(), "", reinterpret_cast<const unsigned char*>(sealed->data()),
                    static_cast<long>(sealed->size())) <= 0) {
    return OpensslError("writing private key");
  }
  return BioString(out.get());
}

Result<Pkey> ParseEncryptedPrivateKeyPem(std::string_view pem, std::string_view password, const std::string& what,
                                         const ScryptLimits& limits) {
  // A cosign key is under 1 KiB; the cap bounds base64 and JSON work on a hostile file.
  if (pem.size() > kMaxPrivateKeyPem) {
    return MakeError(ErrorKind::kInvalidInput, what + ": " + std::to_string(pem.size()) +
                                                   " bytes, more than a cosign private key's " +
                                                   std::to_string(kMaxPrivateKeyPem));
  }
  auto block = ReadPem(pem, what);
  if (!block.ok()) return block.error();
  if (block->type != kSigstorePrivateKeyPem && block->type != kCosignPrivateKeyPem) {
    return MakeError(ErrorKind::kInvalidInput, what + ": PEM type is '" + block->type + "', want '" +
                                                   std::string(kSigstorePrivateKeyPem) + "' (a cosign key)");
  }
  auto der = OpenWithPassword(block->body, password, what, limits);
  if (!der.ok()) return der.error();
  const auto* p = reinterpret_cast<const unsigned char*>(der->data());
  PKCS8_PRIV_KEY_INFO* p8 = d2i_PKCS8_PRIV_KEY_INFO(nullptr, &p, static_cast<long>(der->size()));
  EVP_PKEY* k = p8 == nullptr ? nullptr : EVP_PKCS82PKEY(p8);
  PKCS8_PRIV_KEY_INFO_free(p8);
  OPENSSL_cleanse(der->data(), der->size());
  if (k == nullptr) return MakeError(ErrorKind::kInvalidInput, what + ": decrypted, but not a PKCS#8 private key");
  Pkey key(k, PkeyFree());
  IMGTOOL_TRY(CheckP256(k, what));
  return key;
}

Result<std::string> SignSha256(const Pkey& key, std::string_view message) {
  std::unique_ptr<EVP_MD_CTX, CtxFree> ctx(EVP_MD_CTX_new());
  size_t len = 0;
  if (EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(message.data()),
                     message.size()) != 1) {
    return OpensslError("signing");
  }
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1) {
    return OpensslError("signing");
  }
  sig.resize(len);
  return sig;
}

bool IsDerEcdsaSignature(std::string_view der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  ECDSA_SIG* s = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size()));
  if (s == nullptr) return false;
  bool whole = p == reinterpret_cast<const unsigned char*>(der.data()) + der.size();
  // Strict DER: re-encoding gives the same bytes (no BER leniency, no trailing data).
  unsigned char* again = nullptr;
  int n = i2d_ECDSA_SIG(s, &again);
  bool same = whole && n == static_cast<int>(der.size()) && std::string_view(reinterpret_cast<char*>(again), n) == der;
  OPENSSL_free(again);
  ECDSA_SIG_free(s);
  return same;
}

bool VerifySha256(const Pkey& key, std::string_view message, std::string_view der_signature) {
  if (!IsDerEcdsaSignature(der_signature)) return false;
  std::unique_ptr<EVP_MD_CTX, CtxFree> ctx(EVP_MD_CTX_new());
  return EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) == 1 &&
         EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(der_signature.data()), der_signature.size(),
                          reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
}

}  // namespace imgtool::sign
