// What policy evaluation knows about one image, or an index of images: plain data,
// gathered by gather.h (or written by hand in tests). Each fact that needs I/O is a
// Result: a fact that could not be read carries the error, and every rule that needs it
// fails with that error as the reason. A fact left ungathered says so, so a forgotten
// fact fails closed too.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "oci/result.h"
#include "policy/policy.h"

namespace imgtool::policy {

// What a signature verifier reports for one image.
struct SignatureFacts {
  bool verified = false;
  std::vector<std::string> reasons;  // why not, or which key verified it
};

// The seam to imgtool/sign: verifies the signatures of the image named by `reference`
// against the rule's trusted keys (PEM paths) or keyless identities. Policy code never
// verifies by itself.
using SignatureVerifier = std::function<SignatureFacts(const std::string& reference, const SignedByRule& rule)>;

// One attestation that passed its requirement's signedBy: a trusted key or identity
// verified its DSSE envelope, and its in-toto statement is of the requirement's
// predicateType with a subject naming the image's digest (imgtool/sign checked both).
struct VerifiedStatement {
  std::string statement;  // the statement's bytes (JSON) as signed; its "predicate" is what conditions judge
  std::string signer;     // the key file or keyless identity that verified it
};

// What an attestation verifier reports for one requirement of one image.
struct AttestationFacts {
  std::vector<VerifiedStatement> verified;  // empty: none verified
  std::string reason;                       // when none verified: why (no attestation of the type, untrusted key, ...)
};

// The seam to imgtool/sign for the attestations rule: the attestations of the image
// `reference` names that `requirement.signed_by` verifies, of its predicate type.
using AttestationVerifier =
    std::function<AttestationFacts(const std::string& reference, const AttestationRequirement& requirement)>;

struct SetuidFile {
  std::string layer;  // digest of the layer holding it
  std::string path;
  uint32_t mode = 0;
};

inline Error NotGathered(const std::string& what) {
  return MakeError(ErrorKind::kInternal, what + " was not gathered");
}

struct ImageFacts {
  std::string reference;                           // as the user gave it
  Status opened;                                   // failure: the image could not be opened; every rule fails
  std::string digest;                              // manifest digest the reference resolved to
  std::string user;                                // config.User ("10001:10001", "app", "" for root)
  std::map<std::string, std::string> labels;       // config labels
  std::map<std::string, std::string> annotations;  // manifest annotations
  uint64_t compressed_size = 0;                    // sum of the manifest's layer sizes

  Result<std::string> passwd = NotGathered("/etc/passwd");  // kNotFound: no layer has it
  Result<std::string> stack_json = NotGathered("/etc/imgtool/stack.json");
  Result<std::vector<SetuidFile>> setuid_files = NotGathered("the layer scan");
  Result<uint64_t> uncompressed_size = NotGathered("the uncompressed size");
  Result<SignatureFacts> signature = NotGathered("the signature check");
  // One per requirement of the attestations rule, in the policy's order.
  Result<std::vector<AttestationFacts>> attestations = NotGathered("the attestation check");
};

// One image entry of an index. `image.digest` is the entry's digest even when the image
// could not be opened (`image.opened`), so a failing rule can name it.
struct ChildFacts {
  std::string platform;  // "linux/arm64", or "no platform" for an entry without one
  ImageFacts image;      // every fact but the signature and attestations: signedBy and attestations judge the index
};

// The entries of an index, as the image rules need them: each image is judged on its own
// and a rule passes only when it passes for every one (evaluate.h, EvaluateIndex).
struct IndexFacts {
  Status bounded;                    // failure: too many entries to judge; every image rule fails
  std::vector<ChildFacts> images;    // the image entries, in index order
  std::vector<std::string> skipped;  // entries no runtime runs (artifacts), each with why
};

// What a reference names. For an image, `top` is all there is. For an index, `top` holds
// what belongs to the index itself: reference, opened, digest, signature and attestations
// (cosign signs and attests an index by its own digest, so digestPinned, signedBy and
// attestations judge it), and `index` its
// entries. Kept apart from ImageFacts so an index's empty User or labels can never be
// mistaken for an image's.
struct ReferenceFacts {
  ImageFacts top;
  std::optional<IndexFacts> index;
};

}  // namespace imgtool::policy
