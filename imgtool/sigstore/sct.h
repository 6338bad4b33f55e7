// Certificate Transparency for Fulcio certificates: the SCTs (RFC 6962) embedded in the leaf
// prove that a CT log of the trusted root saw the certificate being issued.
#pragma once

#include "oci/result.h"
#include "sigstore/keys.h"
#include "sigstore/trusted_root.h"

namespace imgtool::sigstore {

// The SCTs of extension 1.3.6.1.4.1.11129.2.4.2 (the first 16 are looked at): at least one
// (Sigstore's threshold) must come from a CT log of `root` (logId.keyId) whose validFor
// contains the SCT's timestamp, and carry a valid signature over the RFC 6962 precert entry
// (the leaf's TBSCertificate without the SCT extension, and sha256 of `issuer`'s
// SubjectPublicKeyInfo). `issuer` is VerifiedChain::issuer. Only SHA-256 signatures (ECDSA
// P-256 or RSA), as CT logs make. kDenied.
Status VerifyScts(const Cert& leaf, const Cert& issuer, const TrustedRoot& root);

}  // namespace imgtool::sigstore
