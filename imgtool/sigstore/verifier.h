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
#include "sigstore/hash.h"
#include "sigstore/signed_times.h"
#include "sigstore/trusted_root.h"

namespace imgtool::sigstore {

// The signed artifact: its sha256 always, its bytes only when a key needs the message
// itself (Ed25519 signs messages, not digests), and other digests a bundle signs when they
// were computed as the artifact streamed (MessageHashes).
struct Artifact {
  std::string sha256;  // raw 32 bytes
  std::optional<std::string> bytes;
  std::vector<ArtifactDigest> more;  // sha384 / sha512
};
// The artifact's digest under `alg`: sha256, one of `more`, or hashed from its bytes;
// kDenied when the artifact is known by other digests only.
Result<std::string> DigestOf(const Artifact& artifact, HashAlgorithm alg);
// The algorithms besides sha256 that a message-signature bundle says its artifact was
// hashed with (messageDigest, hashedrekord entries), on the allow-list: what a caller
// streaming a large artifact must compute beside sha256.
std::vector<HashAlgorithm> MessageHashes(const Bundle& bundle);
Artifact ArtifactOf(std::string_view bytes);
// An artifact known by its digest alone (an image manifest, a file hashed as it streamed).
Artifact ArtifactOfDigest(const oci::Digest& digest);
// "sha256:<64 hex>" (the conformance protocol's FILE_OR_DIGEST).
Result<Artifact> ArtifactFromDigest(std::string_view text);

// Keyless (identity) or key-based: exactly one is set. `times`: how many verified signing
// times are required and which timestamps count (signed_times.h).
struct VerifyPolicy {
  std::optional<IdentityPolicy> identity;
  Pkey key;
  TimePolicy times;
};

// A time the signature is proven to have existed at, and who said so.
struct SignedTime {
  Time time = 0;
  std::string source;  // "rekor log <url> entry 123" or "timestamp authority <uri>"
};

struct Verified {
  std::string signer;   // the certificate's subject, or "key sha256:<hex>"
  std::string issuer;   // the OIDC issuer (keyless only)
  std::string content;  // "message signature" or "DSSE <payloadType>"
  std::vector<SignedTime> times;
  std::vector<std::string> log_entries;  // "<url> #<logIndex>"
};

// kDenied with the first reason for anything that does not verify; kInvalidInput when
// the policy itself is unusable.
Result<Verified> VerifyBundle(const Bundle& bundle, const TrustedRoot& root, const Artifact& artifact,
                              const VerifyPolicy& policy);

}  // namespace imgtool::sigstore
