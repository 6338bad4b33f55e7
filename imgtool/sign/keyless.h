// Keyless (Sigstore) signatures of images, in both places cosign keeps them:
//   - legacy: layers of the signature image at sha256-<hex>.sig (.att), the signature (or
//     DSSE envelope) with the Fulcio certificate, the chain, Rekor's inclusion promise and
//     an RFC 3161 timestamp as annotations (dev.sigstore.cosign/certificate, /chain,
//     /bundle, /rfc3161timestamp);
//   - Sigstore bundles stored as OCI 1.1 artifacts about the image (artifactType
//     application/vnd.dev.sigstore.bundle.v0.3+json), found through the referrers API
//     or its tag schema.
// Each becomes a sigstore::Bundle and goes through the one verifier (sigstore/verifier.h);
// what it must say about the image (the simple-signing payload's digest, or an in-toto
// subject) is checked here. Pure: layers in, a Decision out.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "oci/digest.h"
#include "oci/result.h"
#include "sign_core/verify.h"
#include "sigstore/bundle.h"
#include "sigstore/certificate.h"
#include "sigstore/signed_times.h"
#include "sigstore/trusted_root.h"

namespace imgtool::sign {

inline constexpr std::string_view kBundleArtifactType = "application/vnd.dev.sigstore.bundle.v0.3+json";
inline constexpr std::string_view kCertificateAnnotation = "dev.sigstore.cosign/certificate";
inline constexpr std::string_view kChainAnnotation = "dev.sigstore.cosign/chain";
inline constexpr std::string_view kRekorBundleAnnotation = "dev.sigstore.cosign/bundle";
inline constexpr std::string_view kTimestampAnnotation = "dev.sigstore.cosign/rfc3161timestamp";
// What cosign's new-format image signatures attest: an in-toto statement of this type
// whose subject is the image.
inline constexpr std::string_view kCosignSignPredicate = "https://sigstore.dev/cosign/sign/v1";

// Who may have signed, the roots that say so, and how many signing times must be proven.
struct KeylessPolicy {
  sigstore::IdentityPolicy identity;
  std::shared_ptr<const sigstore::TrustedRoot> root;
  sigstore::TimePolicy times;
};

// A legacy layer as a bundle (v0.1 rules: the inclusion promise proves the time).
Result<sigstore::Bundle> BundleFromLegacyLayer(const SignatureLayer& layer);

// Legacy .sig layers and bundle artifacts (both may be given): verified when one of them
// verifies under `policy` and names `image`.
Decision VerifyKeylessSignatures(const std::vector<SignatureLayer>& legacy, const std::vector<SignatureLayer>& bundles,
                                 const oci::Digest& image, const KeylessPolicy& policy);
// The same for attestations (legacy .att layers, bundle artifacts holding a DSSE in-toto
// statement about `image`); `predicate_type` empty: any but cosign's signature predicate.
Decision VerifyKeylessAttestations(const std::vector<SignatureLayer>& legacy,
                                   const std::vector<SignatureLayer>& bundles, const oci::Digest& image,
                                   const KeylessPolicy& policy, const std::string& predicate_type);

}  // namespace imgtool::sign
