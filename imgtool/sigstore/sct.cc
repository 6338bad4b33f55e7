// VerifyScts (sct.h): OpenSSL parses the SCT list; the signed bytes (RFC 6962 section 3.2,
// precert_entry) are put together here, since the log keys come from the trusted root and
// not from an OpenSSL CTLOG_STORE.
#include <openssl/ct.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <memory>

#include "oci/hex.h"
#include "sigstore/sct.h"

namespace imgtool::sigstore {

namespace {

constexpr int kMaxScts = 16;  // SCTs looked at in one leaf (Fulcio embeds one)

struct SctListFree {
  void operator()(STACK_OF(SCT) * s) const { SCT_LIST_free(s); }
};

Error Denied(const std::string& message) { return MakeError(ErrorKind::kDenied, "signing certificate: " + message); }

std::string Bytes(const unsigned char* p, size_t n) { return std::string(reinterpret_cast<const char*>(p), n); }

void BigEndian(std::string& out, uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

// The leaf as its precertificate was: the TBSCertificate, re-encoded without the SCT list
// (which the log could not have signed over: it did not exist yet).
Result<std::string> PrecertTbs(const Cert& leaf) {
  Cert copy(X509_dup(leaf.get()), X509Free());
  if (!copy) return MakeError(ErrorKind::kInternal, "OpenSSL: X509_dup failed");
  int idx = X509_get_ext_by_NID(copy.get(), NID_ct_precert_scts, -1);
  if (idx < 0) return Denied("no embedded SCT");
  X509_EXTENSION_free(X509_delete_ext(copy.get(), idx));
  unsigned char* der = nullptr;
  int n = i2d_re_X509_tbs(copy.get(), &der);
  if (n <= 0) return MakeError(ErrorKind::kInternal, "OpenSSL: re-encoding the TBSCertificate failed");
  std::string tbs = Bytes(der, static_cast<size_t>(n));
  OPENSSL_free(der);
  return tbs;
}

// sha256 of the issuer's SubjectPublicKeyInfo: ties the SCT to the issuing CA.
std::string IssuerKeyHash(const Cert& issuer) {
  unsigned char* der = nullptr;
  int n = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(issuer.get()), &der);
  if (n <= 0) return "";
  std::string hash = Sha256(Bytes(der, static_cast<size_t>(n)));
  OPENSSL_free(der);
  return hash;
}

// The digitally-signed struct of RFC 6962 section 3.2 for a precert_entry.
std::string SignedData(const SCT* sct, const std::string& tbs, const std::string& issuer_key_hash) {
  unsigned char* ext = nullptr;
  size_t ext_len = SCT_get0_extensions(sct, &ext);
  std::string out;
  out += '\0';  // sct_version v1
  out += '\0';  // signature_type certificate_timestamp
  BigEndian(out, SCT_get_timestamp(sct), 8);
  BigEndian(out, 1, 2);  // entry_type precert_entry
  out += issuer_key_hash;
  BigEndian(out, tbs.size(), 3);
  out += tbs;
  BigEndian(out, ext_len, 2);
  if (ext_len > 0) out += Bytes(ext, ext_len);
  return out;
}

// CT logs sign with SHA-256; VerifyMessage hashes with the key's own hash, so the pair must
// be one where those agree.
bool AlgorithmFits(const SCT* sct, const Pkey& key) {
  int nid = SCT_get_signature_nid(sct);
  if (nid == NID_ecdsa_with_SHA256) return EVP_PKEY_is_a(key.get(), "EC") && EVP_PKEY_get_bits(key.get()) == 256;
  if (nid == NID_sha256WithRSAEncryption) return EVP_PKEY_is_a(key.get(), "RSA");
  return false;
}

Status VerifyOne(const SCT* sct, const std::string& tbs, const std::string& key_hash, const TrustedRoot& root) {
  if (SCT_get_version(sct) != SCT_VERSION_V1) return MakeError(ErrorKind::kDenied, "an SCT that is not version 1");
  unsigned char* id = nullptr;
  size_t id_len = SCT_get0_log_id(sct, &id);
  std::string log_id = id != nullptr ? Bytes(id, id_len) : std::string();
  std::vector<const LogKey*> logs = FindLogs(root.ctlogs, log_id);
  std::string what = "the SCT of log " + oci::HexEncode(log_id.substr(0, 8));
  if (logs.empty()) return MakeError(ErrorKind::kDenied, what + ": not a CT log of the trusted root");
  Time at = static_cast<Time>(SCT_get_timestamp(sct) / 1000);  // milliseconds
  what += " at " + FormatRfc3339(at);
  unsigned char* sig = nullptr;
  size_t sig_len = SCT_get0_signature(sct, &sig);
  if (sig == nullptr) return MakeError(ErrorKind::kDenied, what + ": no signature");
  std::string data = SignedData(sct, tbs, key_hash);
  bool in_period = false;
  for (const LogKey* log : logs) {
    if (!log->valid_for.Contains(at)) continue;
    in_period = true;
    if (AlgorithmFits(sct, log->key) && VerifyMessage(log->key, data, Bytes(sig, sig_len))) return Status::Ok();
  }
  return MakeError(ErrorKind::kDenied,
                   what + (in_period ? ": the signature does not verify" : ": outside the log's validFor"));
}

}  // namespace

Status VerifyScts(const Cert& leaf, const Cert& issuer, const TrustedRoot& root) {
  int crit = 0;
  std::unique_ptr<STACK_OF(SCT), SctListFree> scts(
      static_cast<STACK_OF(SCT)*>(X509_get_ext_d2i(leaf.get(), NID_ct_precert_scts, &crit, nullptr)));
  if (!scts) {
    if (crit == -1) return Denied("no embedded SCT");
    return Denied(crit == -2 ? "more than one SCT list extension" : "malformed SCT list");
  }
  auto tbs = PrecertTbs(leaf);
  if (!tbs.ok()) return tbs.error();
  if (tbs->size() >= (1u << 24)) return Denied("TBSCertificate too large for an SCT");
  std::string key_hash = IssuerKeyHash(issuer);
  if (key_hash.empty()) return MakeError(ErrorKind::kInternal, "OpenSSL: encoding the issuer's key failed");
  std::string why;
  int n = std::min(sk_SCT_num(scts.get()), kMaxScts);
  for (int i = 0; i < n; ++i) {
    Status st = VerifyOne(sk_SCT_value(scts.get(), i), *tbs, key_hash, root);
    if (st.ok()) return st;
    why += (why.empty() ? "" : "; ") + st.error().message;
  }
  if (n == 0) return Denied("the SCT list is empty");
  return Denied("no embedded SCT verifies against the trusted root's CT logs (" + why + ")");
}

}  // namespace imgtool::sigstore
