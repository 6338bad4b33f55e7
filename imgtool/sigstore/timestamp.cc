#include "sigstore/timestamp.h"

#include <openssl/err.h>
#include <openssl/pkcs7.h>
#include <openssl/ts.h>
#include <openssl/x509v3.h>

#include <climits>
#include <memory>
#include <string>

namespace imgtool::sigstore {

namespace {

struct TsRespFree {
  void operator()(TS_RESP* r) const { TS_RESP_free(r); }
};
struct TsVerifyCtxFree {
  void operator()(TS_VERIFY_CTX* c) const { TS_VERIFY_CTX_free(c); }
};
struct Asn1TimeFree {
  void operator()(ASN1_TIME* t) const { ASN1_TIME_free(t); }
};
struct CertStackFree {  // the stack only: its certificates stay with their owners
  void operator()(STACK_OF(X509) * s) const { sk_X509_free(s); }
};
using TsResp = std::unique_ptr<TS_RESP, TsRespFree>;
using TsVerifyCtx = std::unique_ptr<TS_VERIFY_CTX, TsVerifyCtxFree>;
using CertStack = std::unique_ptr<STACK_OF(X509), CertStackFree>;

Error Malformed(const std::string& why) { return MakeError(ErrorKind::kInvalidInput, "timestamp: " + why); }
Error Refused(const std::string& why) { return MakeError(ErrorKind::kDenied, "timestamp: " + why); }
// One authority's reason; the caller names the authority.
Error Denied(const std::string& why) { return MakeError(ErrorKind::kDenied, why); }

// What OpenSSL queued for the failed call, innermost first; the queue is left empty so
// no stale error reaches the next caller on this thread.
std::string OpenSslReason() {
  std::string why;
  const char* data = nullptr;
  int flags = 0;
  while (unsigned long e = ERR_get_error_all(nullptr, nullptr, nullptr, &data, &flags)) {
    const char* reason = ERR_reason_error_string(e);
    std::string one = reason != nullptr ? reason : "error " + std::to_string(ERR_GET_REASON(e));
    if ((flags & ERR_TXT_STRING) != 0 && data != nullptr && *data != '\0') one += std::string(" (") + data + ")";
    why += (why.empty() ? "" : "; ") + one;
  }
  return why.empty() ? "unknown OpenSSL error" : why;
}

// genTime as whole seconds since the epoch: OpenSSL's own parse, counted from 1970.
Result<Time> GenTime(TS_TST_INFO* info) {
  const ASN1_GENERALIZEDTIME* t = TS_TST_INFO_get_time(info);
  std::unique_ptr<ASN1_TIME, Asn1TimeFree> epoch(ASN1_TIME_set(nullptr, 0));
  int days = 0, secs = 0;
  if (t == nullptr || epoch == nullptr || ASN1_TIME_diff(&days, &secs, epoch.get(), t) != 1) {
    ERR_clear_error();
    return Malformed("genTime is not a valid GeneralizedTime");
  }
  return Time{days} * 86400 + secs;
}

// The imprint's hash must be one Sigstore signs with: a weak one (md5, sha1) would let a
// token stand for other signatures.
bool StrongImprintHash(TS_TST_INFO* info) {
  const ASN1_OBJECT* oid = nullptr;
  X509_ALGOR_get0(&oid, nullptr, nullptr, TS_MSG_IMPRINT_get_algo(TS_TST_INFO_get_msg_imprint(info)));
  int nid = OBJ_obj2nid(oid);
  return nid == NID_sha256 || nid == NID_sha384 || nid == NID_sha512;
}

// The one extended key usage is timeStamping (RFC 3161 2.3). The signing certificate must
// also mark it critical; intermediates need only carry it ("EKU chaining", as sigstore-go).
bool TimestampingOnly(X509* cert, bool critical) {
  if (X509_get_extended_key_usage(cert) != XKU_TIMESTAMP) return false;
  int at = X509_get_ext_by_NID(cert, NID_ext_key_usage, -1);
  return !critical || (at >= 0 && X509_EXTENSION_get_critical(X509_get_ext(cert, at)) == 1);
}

Status CheckAuthorityUsage(const CertAuthority& ca) {
  if (!TimestampingOnly(ca.chain.front().get(), true)) {
    return Denied("the TSA's signing certificate lacks a critical timeStamping-only extended key usage");
  }
  for (size_t i = 1; i + 1 < ca.chain.size(); ++i) {
    if (!TimestampingOnly(ca.chain[i].get(), false)) {
      return Denied("the TSA's intermediate certificate " + std::to_string(i) + " is not for timeStamping only");
    }
  }
  return Status::Ok();
}

// The token's one signer is the TSA's own signing certificate, named by issuer and serial.
// Certificates embedded in the token are not consulted (PKCS7_NOINTERN): they prove nothing.
bool SignedByLeaf(PKCS7* token, const Cert& leaf) {
  CertStack only(sk_X509_new_null());
  if (only == nullptr || sk_X509_push(only.get(), leaf.get()) != 1) return false;
  CertStack signers(PKCS7_get0_signers(token, only.get(), PKCS7_NOINTERN));
  ERR_clear_error();
  return signers != nullptr && sk_X509_num(signers.get()) == 1;
}

// The trust anchor (the chain's last certificate), with verification pinned to genTime.
X509_STORE* StoreAt(const Cert& anchor, Time at) {
  X509_STORE* store = X509_STORE_new();
  if (store == nullptr || X509_STORE_add_cert(store, anchor.get()) != 1) {
    X509_STORE_free(store);
    return nullptr;
  }
  X509_VERIFY_PARAM_set_time(X509_STORE_get0_param(store), static_cast<time_t>(at));
  return store;
}

// The signing certificate and intermediates, as untrusted helpers OpenSSL searches before
// the token's own certificates. Owned by the caller (up-referenced).
STACK_OF(X509) * Untrusted(const CertAuthority& ca) {
  STACK_OF(X509)* certs = sk_X509_new_null();
  for (size_t i = 0; certs != nullptr && i + 1 < ca.chain.size(); ++i) {
    if (sk_X509_push(certs, ca.chain[i].get()) <= 0) {
      sk_X509_pop_free(certs, X509_free);
      return nullptr;
    }
    X509_up_ref(ca.chain[i].get());
  }
  return certs;
}

// OpenSSL 3.4 renamed the TS_VERIFY_CTX setters (set0_: the context takes ownership,
// as the old ones did); the old names are deprecated there.
void HandOver(TS_VERIFY_CTX* ctx, X509_STORE* store, STACK_OF(X509) * certs, BIO* data) {
#if OPENSSL_VERSION_NUMBER >= 0x30400000L
  TS_VERIFY_CTX_set0_store(ctx, store);
  TS_VERIFY_CTX_set0_certs(ctx, certs);
  TS_VERIFY_CTX_set0_data(ctx, data);
#else
  TS_VERIFY_CTX_set_store(ctx, store);
  TS_VERIFY_CTX_set_certs(ctx, certs);
  TS_VERIFY_CTX_set_data(ctx, data);
#endif
}

// Status, version, CMS signature, chain to the anchor at genTime (purpose timestampsign:
// the signer's critical timeStamping EKU), ESS signing-certificate binding, and the imprint
// over `signed_bytes` with the token's own hash: all OpenSSL's TS_RESP_verify_response.
Result<TsVerifyCtx> VerifyContext(const CertAuthority& ca, Time at, std::string_view signed_bytes) {
  TsVerifyCtx ctx(TS_VERIFY_CTX_new());
  X509_STORE* store = StoreAt(ca.chain.back(), at);
  STACK_OF(X509)* certs = Untrusted(ca);
  static const char kEmpty = 0;  // BIO_new_mem_buf refuses a null pointer, even for 0 bytes
  BIO* data =
      BIO_new_mem_buf(signed_bytes.empty() ? &kEmpty : signed_bytes.data(), static_cast<int>(signed_bytes.size()));
  if (ctx == nullptr || store == nullptr || certs == nullptr || data == nullptr) {
    X509_STORE_free(store);
    sk_X509_pop_free(certs, X509_free);
    BIO_free(data);
    ERR_clear_error();
    return MakeError(ErrorKind::kInternal, "timestamp: out of memory");
  }
  HandOver(ctx.get(), store, certs, data);
  TS_VERIFY_CTX_set_flags(ctx.get(), TS_VFY_SIGNATURE | TS_VFY_VERSION | TS_VFY_DATA);
  return ctx;
}

// One trusted TSA's verdict on the token.
Status VerifyWithAuthority(TS_RESP* resp, std::string_view signed_bytes, const CertAuthority& ca, Time gen_time) {
  if (ca.chain.empty()) return Denied("the TSA has no certificates");
  IMGTOOL_TRY(CheckAuthorityUsage(ca));
  if (!SignedByLeaf(TS_RESP_get_token(resp), ca.chain.front())) {
    return Denied("not signed by the TSA's signing certificate");
  }
  auto ctx = VerifyContext(ca, gen_time, signed_bytes);
  if (!ctx.ok()) return ctx.error();
  if (TS_RESP_verify_response(ctx->get(), resp) != 1) return Denied(OpenSslReason());
  if (!ca.valid_for.Contains(gen_time)) {
    return Denied("genTime " + FormatRfc3339(gen_time) + " is outside the TSA's validity in the trusted root");
  }
  return Status::Ok();
}

// A DER TimeStampResp, whole, granted, with a token whose genTime and hash are usable.
Result<TsResp> ParseResponse(std::string_view der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  TsResp resp(d2i_TS_RESP(nullptr, &p, static_cast<long>(der.size())));
  if (resp == nullptr) {
    ERR_clear_error();
    return Malformed("not a DER TimeStampResp");
  }
  if (p != reinterpret_cast<const unsigned char*>(der.data()) + der.size())
    return Malformed("bytes after the response");
  long status = ASN1_INTEGER_get(TS_STATUS_INFO_get0_status(TS_RESP_get_status_info(resp.get())));
  if (status != TS_STATUS_GRANTED && status != TS_STATUS_GRANTED_WITH_MODS) {
    return Refused("the TSA did not grant it (status " + std::to_string(status) + ")");
  }
  if (TS_RESP_get_token(resp.get()) == nullptr || TS_RESP_get_tst_info(resp.get()) == nullptr) {
    return Malformed("a granted response without a token");
  }
  if (!StrongImprintHash(TS_RESP_get_tst_info(resp.get()))) {
    return Refused("the message imprint's hash is not sha256, sha384 or sha512");
  }
  return resp;
}

}  // namespace

Result<Time> VerifyTimestamp(std::string_view der, std::string_view signed_bytes, const TrustedRoot& root) {
  auto verdict = VerifyTimestampBy(der, signed_bytes, root);
  if (!verdict.ok()) return verdict.error();
  return verdict->time;
}

Result<TimestampVerdict> VerifyTimestampBy(std::string_view der, std::string_view signed_bytes,
                                           const TrustedRoot& root) {
  if (der.size() > kMaxTimestamp) {
    return Malformed(std::to_string(der.size()) + " bytes (at most " + std::to_string(kMaxTimestamp) + ")");
  }
  if (signed_bytes.size() > INT_MAX) return Refused("signature too large");
  auto resp = ParseResponse(der);
  if (!resp.ok()) return resp.error();
  auto gen_time = GenTime(TS_RESP_get_tst_info(resp->get()));
  if (!gen_time.ok()) return gen_time.error();
  if (root.timestamp_authorities.empty()) return Refused("the trusted root has no timestamp authorities");
  // Every authority is tried; the refusal names why each one said no.
  std::string why;
  for (size_t i = 0; i < root.timestamp_authorities.size(); ++i) {
    const CertAuthority& ca = root.timestamp_authorities[i];
    Status st = VerifyWithAuthority(resp->get(), signed_bytes, ca, *gen_time);
    if (st.ok()) return TimestampVerdict{*gen_time, i};
    why += (why.empty() ? "" : "; ") + (ca.uri.empty() ? std::string("a TSA") : ca.uri) + ": " + st.error().message;
  }
  return Refused("no trusted timestamp authority vouches for it: " + why);
}

}  // namespace imgtool::sigstore
