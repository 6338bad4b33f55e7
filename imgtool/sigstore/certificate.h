// The Fulcio signing certificate: who it names (identity), whether it may sign code (leaf
// checks), and whether a Fulcio CA of the trusted root issued it (chain). The embedded CT
// proofs are in sigstore/sct.h. Each check stands alone; the verifier decides the order
// and the times (see README.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "oci/result.h"
#include "regexp/go_regexp.h"
#include "sigstore/keys.h"
#include "sigstore/time.h"
#include "sigstore/trusted_root.h"

namespace imgtool::sigstore {

// The signer's identity as Fulcio wrote it into the leaf.
struct CertIdentity {
  // The subjectAltName: an email (rfc822Name), a URI, or an otherName of type
  // 1.3.6.1.4.1.57264.1.7 (a UTF8String username), whichever the certificate carries.
  std::string subject;
  // The OIDC issuer: extension 1.3.6.1.4.1.57264.1.8 (a DER UTF8String) when present, else
  // the legacy 1.3.6.1.4.1.57264.1.1 (the raw bytes).
  std::string issuer;
};

// Fulcio writes exactly one identity SAN; a leaf with none, or with several (which one
// signed would be ambiguous), is refused, as is one whose two issuer extensions disagree, a
// repeated extension, an identity over 4 KiB or one with control characters. kDenied.
Result<CertIdentity> ReadIdentity(const Cert& leaf);

// What the verifier asks for (cosign's --certificate-identity[-regexp] and
// --certificate-oidc-issuer[-regexp]). Exactly one of subject / subject_regexp, and one of
// issuer / issuer_regexp, are set (else kInvalidInput). Regexps are Go's, as cosign and
// sigstore-go compile them (regexp/go_regexp.h: RE2 syntax, linear-time matching, compiled
// where the pattern is read), and searched for as Go's MatchString does: anchor them with ^
// and $ to cover the whole value.
struct IdentityPolicy {
  std::string subject;
  std::optional<regexp::GoRegexp> subject_regexp;
  std::string issuer;
  std::optional<regexp::GoRegexp> issuer_regexp;
};

// kDenied naming what the certificate says and what was wanted; kInvalidInput for a policy
// that is not well formed (both or neither of a pair).
Status MatchIdentity(const CertIdentity& id, const IdentityPolicy& policy);

// The leaf may sign code: keyUsage with digitalSignature, extendedKeyUsage with codeSigning
// (anyExtendedKeyUsage is not enough), and it is no CA (basicConstraints CA false or
// absent, no keyCertSign). kDenied.
Status CheckLeaf(const Cert& leaf);

// The chain that VerifyChain found.
struct VerifiedChain {
  // Points into the TrustedRoot given.
  const CertAuthority* authority = nullptr;
  // The certificate that issued the leaf: the SCTs were signed over its key's hash.
  Cert issuer;
};

// `certs` is the bundle's list, the leaf first. The certificates after the leaf (v0.1/v0.2
// bundles carry some) are not used to build the path, as in sigstore-go: only the trusted
// root's chains are; but a bundle carrying a self-issued (root) certificate is refused.
// The path leaf -> the CA's intermediates -> the CA's last certificate (the anchor) must
// verify with OpenSSL at time `at` (every certificate valid then; X509 strict mode), for a
// CA whose validFor contains `at`. CAs are tried in the trusted root's order. kDenied.
Result<VerifiedChain> VerifyChain(const std::vector<Cert>& certs, const TrustedRoot& root, Time at);

}  // namespace imgtool::sigstore
