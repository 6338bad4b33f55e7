// CheckLeaf and VerifyChain (certificate.h): may the leaf sign code, and did a Fulcio CA of
// the trusted root issue it. OpenSSL builds and checks the path; the trust anchors and the
// time are ours.
#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <memory>

#include "sigstore/certificate.h"

namespace imgtool::sigstore {

namespace {

constexpr size_t kMaxBundleCerts = 16;  // certificates a bundle may list
constexpr int kMaxDepth = 8;            // intermediates between the leaf and the anchor

struct StoreFree {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
struct StoreCtxFree {
  void operator()(X509_STORE_CTX* c) const { X509_STORE_CTX_free(c); }
};
struct StackFree {  // the stack only borrows its certificates
  void operator()(STACK_OF(X509) * s) const { sk_X509_free(s); }
};

Error Denied(const std::string& message) { return MakeError(ErrorKind::kDenied, "signing certificate: " + message); }

// Subject == issuer: a root (or a self-issued certificate), which has no place in a bundle
// (the client spec: the trusted root alone says which roots count).
bool SelfIssued(X509* cert) { return X509_NAME_cmp(X509_get_subject_name(cert), X509_get_issuer_name(cert)) == 0; }

// One try: the leaf up to `ca`'s last certificate (the only anchor), through `ca`'s other
// certificates (the only intermediates), all valid at `at`. The leaf's issuer, or why not.
Result<Cert> BuildPath(X509* leaf, const CertAuthority& ca, Time at) {
  if (ca.chain.empty()) return MakeError(ErrorKind::kDenied, ca.uri + ": the authority has no certificates");
  std::unique_ptr<X509_STORE, StoreFree> store(X509_STORE_new());
  std::unique_ptr<STACK_OF(X509), StackFree> untrusted(sk_X509_new_null());
  std::unique_ptr<X509_STORE_CTX, StoreCtxFree> ctx(X509_STORE_CTX_new());
  if (!store || !untrusted || !ctx || X509_STORE_add_cert(store.get(), ca.chain.back().get()) != 1) {
    return MakeError(ErrorKind::kInternal, "OpenSSL: out of memory");
  }
  for (size_t i = 0; i + 1 < ca.chain.size(); ++i) {
    if (sk_X509_push(untrusted.get(), ca.chain[i].get()) <= 0) {
      return MakeError(ErrorKind::kInternal, "OpenSSL: out of memory");
    }
  }
  if (X509_STORE_CTX_init(ctx.get(), store.get(), leaf, untrusted.get()) != 1) {
    return MakeError(ErrorKind::kInternal, "OpenSSL: X509_STORE_CTX_init failed");
  }
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  X509_VERIFY_PARAM_set_time(param, static_cast<time_t>(at));  // also sets X509_V_FLAG_USE_CHECK_TIME
  X509_VERIFY_PARAM_set_depth(param, kMaxDepth);
  // PARTIAL_CHAIN: the CA's last certificate is the anchor even when it is not self-signed,
  // as sigstore-go takes it; nothing else is in the store.
  X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_X509_STRICT | X509_V_FLAG_PARTIAL_CHAIN);
  if (X509_verify_cert(ctx.get()) != 1) {
    std::string why = X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get()));
    ERR_clear_error();
    return MakeError(ErrorKind::kDenied, ca.uri + ": " + why);
  }
  STACK_OF(X509)* chain = X509_STORE_CTX_get0_chain(ctx.get());
  if (sk_X509_num(chain) < 2) {
    return MakeError(ErrorKind::kDenied, ca.uri + ": the leaf is the authority's own certificate");
  }
  X509* issuer = sk_X509_value(chain, 1);
  X509_up_ref(issuer);
  return Cert(issuer, X509Free());
}

// The time the path is checked at. Go's x509 (so cosign and sigstore-go) and
// sigstore-python take notAfter as the last valid second; OpenSSL takes it as already
// expired. At exactly the leaf's notAfter, the path is checked one second earlier, which
// is still inside the leaf's validity (notBefore < notAfter).
Time PathTime(X509* leaf, Time at) {
  ASN1_TIME* at_asn1 = ASN1_TIME_set(nullptr, static_cast<time_t>(at));
  int day = 0, sec = 1;
  bool same = at_asn1 != nullptr && ASN1_TIME_diff(&day, &sec, at_asn1, X509_get0_notAfter(leaf)) == 1;
  ASN1_TIME_free(at_asn1);
  return same && day == 0 && sec == 0 ? at - 1 : at;
}

}  // namespace

Status CheckLeaf(const Cert& leaf) {
  X509* c = leaf.get();
  uint32_t flags = X509_get_extension_flags(c);  // parses (and caches) the extensions
  if ((flags & EXFLAG_INVALID) != 0) return Denied("malformed or repeated extensions");
  if ((flags & EXFLAG_CA) != 0 || X509_check_ca(c) != 0) return Denied("is a CA certificate, not a leaf");
  if ((flags & EXFLAG_KUSAGE) == 0 || (X509_get_key_usage(c) & KU_DIGITAL_SIGNATURE) == 0) {
    return Denied("key usage lacks digitalSignature");
  }
  if ((flags & EXFLAG_XKUSAGE) == 0 || (X509_get_extended_key_usage(c) & XKU_CODE_SIGN) == 0) {
    return Denied("extended key usage lacks codeSigning");
  }
  return Status::Ok();
}

Result<VerifiedChain> VerifyChain(const std::vector<Cert>& certs, const TrustedRoot& root, Time at) {
  if (certs.empty()) return MakeError(ErrorKind::kInvalidInput, "signing certificate: the bundle has none");
  if (certs.size() > kMaxBundleCerts) return Denied("the bundle lists more than 16 certificates");
  for (size_t i = 0; i < certs.size(); ++i) {
    if (SelfIssued(certs[i].get())) {
      return Denied("the bundle carries a self-signed (root) certificate (number " + std::to_string(i + 1) +
                    "); only the trusted root names roots");
    }
  }
  std::string why;
  bool any_valid = false;
  for (const CertAuthority& ca : root.certificate_authorities) {
    if (!ca.valid_for.Contains(at)) continue;
    any_valid = true;
    auto issuer = BuildPath(certs[0].get(), ca, PathTime(certs[0].get(), at));
    if (issuer.ok()) return VerifiedChain{&ca, *issuer};
    if (issuer.error().kind == ErrorKind::kInternal) return issuer.error();
    why += (why.empty() ? "" : "; ") + issuer.error().message;
  }
  if (!any_valid) return Denied("no certificate authority of the trusted root is valid at " + FormatRfc3339(at));
  return Denied("it does not chain to a certificate authority of the trusted root at " + FormatRfc3339(at) + " (" +
                why + ")");
}

}  // namespace imgtool::sigstore
