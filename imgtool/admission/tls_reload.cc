#include "admission/tls_reload.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <vector>

namespace imgtool::admission {

struct KeyPair {
  X509* cert = nullptr;
  std::vector<X509*> chain;  // intermediates after the leaf, as in a tls.crt bundle
  EVP_PKEY* key = nullptr;
  ~KeyPair() {
    X509_free(cert);
    for (X509* c : chain) X509_free(c);
    EVP_PKEY_free(key);
  }
};

namespace {

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "no detail";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using Bio = std::unique_ptr<BIO, BioFree>;

Bio MemBio(const std::string& s) { return Bio(BIO_new_mem_buf(s.data(), static_cast<int>(s.size()))); }

// Runs in each handshake, after the ClientHello: the pair current now.
int UseCurrentPair(SSL* ssl, void* arg) {
  auto pair = static_cast<CertificateStore*>(arg)->Current();
  if (!pair) return 0;
  if (SSL_use_certificate(ssl, pair->cert) != 1 || SSL_use_PrivateKey(ssl, pair->key) != 1) return 0;
  STACK_OF(X509)* chain = sk_X509_new_null();
  for (X509* c : pair->chain) sk_X509_push(chain, c);
  int ok = SSL_set1_chain(ssl, chain);  // takes its own references
  sk_X509_free(chain);
  return ok == 1 ? 1 : 0;
}

}  // namespace

CertificateStore::CertificateStore(std::string cert_path, std::string key_path)
    : cert_(std::move(cert_path)), key_(std::move(key_path)) {}

CertificateStore::~CertificateStore() = default;

Result<std::shared_ptr<const KeyPair>> CertificateStore::Parse(const std::string& cert_pem,
                                                               const std::string& key_pem) const {
  auto pair = std::make_shared<KeyPair>();
  Bio cb = MemBio(cert_pem);
  pair->cert = PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr);
  if (!pair->cert) {
    return MakeError(ErrorKind::kInvalidInput, cert_.path() + ": no PEM certificate (" + OpenSslError() + ")");
  }
  // The rest of the file: the chain; at most a few, as a bundle holds.
  while (pair->chain.size() < 16) {
    X509* c = PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr);
    if (!c) break;
    pair->chain.push_back(c);
  }
  ERR_clear_error();  // the end of the file reads as an error
  Bio kb = MemBio(key_pem);
  pair->key = PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr);
  if (!pair->key) {
    return MakeError(ErrorKind::kInvalidInput, key_.path() + ": no PEM private key (" + OpenSslError() + ")");
  }
  if (X509_check_private_key(pair->cert, pair->key) != 1) {
    ERR_clear_error();
    return MakeError(ErrorKind::kInvalidInput,
                     key_.path() + ": the key does not match the certificate " + cert_.path());
  }
  return std::shared_ptr<const KeyPair>(std::move(pair));
}

Status CertificateStore::Load() {
  auto changed = ReloadChanged();
  if (!changed.ok()) return changed.error();
  return Status::Ok();
}

Result<bool> CertificateStore::ReloadChanged() {
  std::string cert, key;
  auto c = cert_.Changed(&cert, 1 << 20);
  auto k = c.ok() ? key_.Changed(&key, 1 << 20) : Result<bool>(false);
  if (!c.ok() || !k.ok()) {
    Error e = !c.ok() ? c.error() : k.error();
    bool repeated = e.message == unreadable_;
    unreadable_ = e.message;
    if (repeated) return false;
    return e;
  }
  unreadable_.clear();
  if (!*c && !*k) return false;
  if (*c) cert_pem_ = std::move(cert);
  if (*k) key_pem_ = std::move(key);
  auto pair = Parse(cert_pem_, key_pem_);
  if (!pair.ok()) return pair.error();
  std::lock_guard<std::mutex> lock(mu_);
  current_ = *pair;
  return true;
}

void CertificateStore::Install(SSL_CTX* ctx) { SSL_CTX_set_cert_cb(ctx, UseCurrentPair, this); }

std::shared_ptr<const KeyPair> CertificateStore::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

std::string CertificateStore::Serial() const {
  auto pair = Current();
  if (!pair) return "";
  BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get_serialNumber(pair->cert), nullptr);
  if (!bn) return "";
  char* hex = BN_bn2hex(bn);
  std::string out = hex ? hex : "";
  OPENSSL_free(hex);
  BN_free(bn);
  return out;
}

}  // namespace imgtool::admission
