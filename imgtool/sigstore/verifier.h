// Verifying a Sigstore bundle as cosign verify-blob and sigstore-go do, offline: what was
// signed matches the artifact, by whom (a Fulcio certificate chaining to the trusted root,
// with its SCTs and the identity asked for; or a given key), and when (Rekor entries with
// an inclusion promise or proof, RFC 3161 timestamps), every part consistent with every
// other. Pure: bundle + trusted root + artifact digest + policy -> facts or a denial.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "oci/digest.h"
#include "oci/result.h"
#include "sigstore/bundle.h"
#include "sigstore/certificate.h"
#include "sigstore/trusted_root.h"

namespace imgtool::sigstore {

// The signed artifact: its sha256 always, its bytes only when a key needs the message
// itself (Ed25519 signs messages, not digests).
struct Artifact {
  std::string sha256;  // raw 32 bytes
  std::optional<std::string> bytes;
};
Artifact ArtifactOf(std::string_view bytes);
// An artifact known by its digest alone (an image manifest, a file hashed as it streamed).
Artifact ArtifactOfDigest(const oci::Digest& digest);
// "sha256:<64 hex>" (the conformance protocol's FILE_OR_DIGEST).
Result<Artifact> ArtifactFromDigest(std::string_view text);

// Keyless (identity) or key-based: exactly one is set.
struct VerifyPolicy {
  std::optional<IdentityPolicy> identity;
  Pkey key;
};

// A time the signature is proven to have existed at, and who said so.
struct SignedTime {
  Time time = 0;
  std::string source;  // "rekor log <url> entry 123" or "timestamp authority <uri>"
};

struct Verified {
  std::string signer;  // the certificate's subject, or "key sha256:<hex>"
  std::string issuer;  // the OIDC issuer (keyless only)
  std::string content;  // "message signature" or "DSSE <payloadType>"
  std::vector<SignedTime> times;
  std::vector<std::string> log_entries;  // "<url> #<logIndex>"
};

// kDenied with the first reason for anything that does not verify; kInvalidInput when
// the policy itself is unusable.
Result<Verified> VerifyBundle(const Bundle& bundle, const TrustedRoot& root, const Artifact& artifact,
                              const VerifyPolicy& policy);

}  // namespace imgtool::sigstore
