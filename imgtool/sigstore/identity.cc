// ReadIdentity and MatchIdentity (certificate.h): who the Fulcio leaf names, and whether
// that is whom the verifier asked for.
#include <openssl/objects.h>
#include <openssl/x509v3.h>

#include <memory>
#include <optional>

#include "sigstore/certificate.h"

namespace imgtool::sigstore {

namespace {

constexpr int kMaxNames = 16;                               // SANs in one leaf (Fulcio writes one)
constexpr int kMaxExtensions = 64;                          // extensions looked at in one leaf
constexpr size_t kMaxIdentity = 4096;                       // bytes of a SAN or issuer
constexpr const char* kIssuerV1 = "1.3.6.1.4.1.57264.1.1";  // raw bytes (deprecated)
constexpr const char* kIssuerV2 = "1.3.6.1.4.1.57264.1.8";  // DER UTF8String
constexpr const char* kUsername = "1.3.6.1.4.1.57264.1.7";  // otherName SAN type

struct NamesFree {
  void operator()(GENERAL_NAMES* n) const { GENERAL_NAMES_free(n); }
};
struct Utf8Free {
  void operator()(ASN1_UTF8STRING* s) const { ASN1_UTF8STRING_free(s); }
};

Error Denied(const std::string& message) { return MakeError(ErrorKind::kDenied, "signing certificate: " + message); }

std::string Text(const ASN1_STRING* s) {
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                     static_cast<size_t>(ASN1_STRING_length(s)));
}

std::string OidText(const ASN1_OBJECT* obj) {
  char buf[128] = {0};
  int n = OBJ_obj2txt(buf, sizeof(buf), obj, 1);
  return n > 0 && static_cast<size_t>(n) < sizeof(buf) ? std::string(buf) : std::string();
}

// Identities are compared and printed: no control characters, nothing unbounded.
Status CheckText(const std::string& text, const std::string& what) {
  if (text.empty()) return Denied(what + " is empty");
  if (text.size() > kMaxIdentity) return Denied(what + " is over 4 KiB");
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) return Denied(what + " contains control characters");
  }
  return Status::Ok();
}

// The identity text of one SAN; nullopt for kinds Sigstore does not use (DNS, IP, ...).
std::optional<std::string> IdentityName(const GENERAL_NAME* name) {
  if (name->type == GEN_EMAIL || name->type == GEN_URI) return Text(name->d.ia5);
  if (name->type != GEN_OTHERNAME) return std::nullopt;
  const OTHERNAME* other = name->d.otherName;
  if (OidText(other->type_id) != kUsername || other->value == nullptr) return std::nullopt;
  if (other->value->type != V_ASN1_UTF8STRING) return std::nullopt;
  return Text(other->value->value.utf8string);
}

Result<std::string> ReadSubject(X509* leaf) {
  int crit = 0;
  std::unique_ptr<GENERAL_NAMES, NamesFree> names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(leaf, NID_subject_alt_name, &crit, nullptr)));
  if (!names) {
    if (crit == -1) return Denied("no subjectAltName");
    return Denied(crit == -2 ? "more than one subjectAltName extension" : "malformed subjectAltName");
  }
  if (sk_GENERAL_NAME_num(names.get()) > kMaxNames) return Denied("more than 16 subject alternative names");
  std::optional<std::string> found;
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    auto name = IdentityName(sk_GENERAL_NAME_value(names.get(), i));
    if (!name) continue;
    if (found) return Denied("more than one identity in subjectAltName (Fulcio writes one)");
    found = std::move(name);
  }
  if (!found) return Denied("no email, URI or username in subjectAltName");
  IMGTOOL_TRY(CheckText(*found, "subjectAltName"));
  return *found;
}

// The value of extension `oid`: nullopt when absent; an error when it is there twice.
Result<std::optional<std::string>> ExtensionValue(X509* cert, const std::string& oid) {
  int count = X509_get_ext_count(cert);
  if (count > kMaxExtensions) return Denied("more than 64 extensions");
  std::optional<std::string> value;
  for (int i = 0; i < count; ++i) {
    X509_EXTENSION* ext = X509_get_ext(cert, i);
    if (OidText(X509_EXTENSION_get_object(ext)) != oid) continue;
    if (value) return Denied("extension " + oid + " appears twice");
    value = Text(X509_EXTENSION_get_data(ext));
  }
  return value;
}

// The DER UTF8String of extension 1.3.6.1.4.1.57264.1.8, whole.
Result<std::string> Utf8Der(const std::string& der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  std::unique_ptr<ASN1_UTF8STRING, Utf8Free> s(d2i_ASN1_UTF8STRING(nullptr, &p, static_cast<long>(der.size())));
  if (!s || p != reinterpret_cast<const unsigned char*>(der.data()) + der.size()) {
    return Denied(std::string("extension ") + kIssuerV2 + " is not one DER UTF8String");
  }
  return Text(s.get());
}

Result<std::string> ReadIssuer(X509* leaf) {
  auto v1 = ExtensionValue(leaf, kIssuerV1);
  if (!v1.ok()) return v1.error();
  auto v2 = ExtensionValue(leaf, kIssuerV2);
  if (!v2.ok()) return v2.error();
  std::string issuer;
  if (v2->has_value()) {
    auto text = Utf8Der(**v2);
    if (!text.ok()) return text.error();
    issuer = *text;
    // Fulcio writes both with one value; two different answers to "who vouched" is forgery.
    if (v1->has_value() && **v1 != issuer) return Denied("the two OIDC issuer extensions disagree");
  } else if (v1->has_value()) {
    issuer = **v1;
  } else {
    return Denied("no OIDC issuer extension (1.3.6.1.4.1.57264.1.8 or .1.1)");
  }
  IMGTOOL_TRY(CheckText(issuer, "OIDC issuer"));
  return issuer;
}

// One half of the policy: `found` against exactly one of `exact` / `pattern`.
Status MatchOne(const std::string& what, const std::string& found, const std::string& exact,
                const std::optional<regexp::GoRegexp>& pattern) {
  if (exact.empty() == !pattern.has_value()) {
    return MakeError(ErrorKind::kInvalidInput,
                     "identity policy: give exactly one of " + what + " and " + what + " regexp");
  }
  if (!exact.empty()) {
    if (found == exact) return Status::Ok();
    return MakeError(ErrorKind::kDenied, "certificate " + what + " is '" + found + "', want '" + exact + "'");
  }
  // A search, as cosign's and sigstore-go's Go regexp MatchString: a pattern that must
  // cover the whole value says so with ^ and $. Linear in the value, whatever the pattern.
  if (pattern->Search(found)) return Status::Ok();
  return MakeError(ErrorKind::kDenied,
                   "certificate " + what + " is '" + found + "', want a match of regexp '" + pattern->pattern() + "'");
}

}  // namespace

Result<CertIdentity> ReadIdentity(const Cert& leaf) {
  CertIdentity id;
  auto subject = ReadSubject(leaf.get());
  if (!subject.ok()) return subject.error();
  id.subject = *subject;
  auto issuer = ReadIssuer(leaf.get());
  if (!issuer.ok()) return issuer.error();
  id.issuer = *issuer;
  return id;
}

Status MatchIdentity(const CertIdentity& id, const IdentityPolicy& policy) {
  // The policy is checked whole before anything is compared, so a malformed one is always
  // reported as such.
  Status subject = MatchOne("subject", id.subject, policy.subject, policy.subject_regexp);
  Status issuer = MatchOne("OIDC issuer", id.issuer, policy.issuer, policy.issuer_regexp);
  for (const Status* s : {&subject, &issuer}) {
    if (!s->ok() && s->error().kind == ErrorKind::kInvalidInput) return *s;
  }
  if (!subject.ok()) return subject;
  return issuer;
}

}  // namespace imgtool::sigstore
