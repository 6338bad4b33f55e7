// A policy file (policies/*.json): which rules an image must satisfy, and which checks
// `imgtool lint` applies to a Dockerfile. Parsing is strict so a policy fails closed: an
// unknown rule, an unknown field, a wrong type or a policyVersion other than 1 is a
// kInvalidInput error naming the JSON path ("golden.json: $.rules.nonRot: unknown rule").
//
// Not here: reading images (gather.h) or deciding (evaluate.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "oci/result.h"
#include "policy/conditions.h"
#include "regexp/go_regexp.h"

namespace imgtool::policy {

// The components allowedStacks may name (the stack pins of a spec, builder/stack.h).
const std::vector<std::string>& StackComponents();

// A keyless signer, as policy-controller and Kyverno name one: the OIDC issuer and the
// certificate's subject (SAN), each exactly or as a regexp in Go's syntax (RE2), compiled
// when the policy is parsed and searched for, as cosign and policy-controller do: anchor it
// with ^ and $.
struct IdentityRule {
  std::string issuer;
  std::optional<regexp::GoRegexp> issuer_regexp;
  std::string subject;
  std::optional<regexp::GoRegexp> subject_regexp;
};

// Signed by one of the keys, or keyless by one of the identities (any one suffices).
struct SignedByRule {
  std::vector<std::string> keys;  // absolute paths (relative ones resolve against the policy's folder)
  std::vector<IdentityRule> identities = {};
  std::string trusted_root = {};  // trusted_root.json for identities; "" = the public-good root built in
};

// One requirement of the attestations rule (policies/rules/attestations.md): an attestation
// of `predicate_type`, verified by `signed_by` and about the image, whose predicate
// satisfies every condition.
struct AttestationRequirement {
  std::string name;            // as written, or "<predicateType> #<index>" when the policy names none
  std::string predicate_type;  // a URI (the short names spdxjson, spdx and custom resolved)
  SignedByRule signed_by;
  std::vector<Condition> conditions;  // may be empty: a verified attestation suffices
};

struct AllowedStacksRule {
  // Each: component -> version, compared exactly with the image's pins.
  std::vector<std::map<std::string, std::string>> stacks;
  bool allow_none = false;  // an image without any stack pin (a CPU-only image) passes
};

struct BaseImagesRule {
  std::vector<std::string> allow;  // manifest digests "sha256:..."
  std::vector<std::string> names;  // when set, org.opencontainers.image.base.name must be one of these
  bool allow_scratch = false;      // no base.digest annotation: built from scratch
};

struct MaxSizeRule {
  std::optional<uint64_t> bytes;               // sum of the layers' compressed sizes
  std::optional<uint64_t> uncompressed_bytes;  // sum of the layers' tar sizes (reads every layer)
};

// Checks of `imgtool lint`: all on unless the policy's "dockerfile" section turns one off.
struct DockerfileRules {
  bool from_digest = true;    // FROM image@sha256:... (scratch and earlier stages are fine)
  bool no_latest = true;      // no :latest tag anywhere an image is named
  bool non_root_user = true;  // the final stage's USER is numeric and not 0
  bool add_checksum = true;   // ADD of a URL carries --checksum=sha256:...
};

struct Policy {
  std::string path;  // as given, for messages
  bool non_root = false;
  bool digest_pinned = false;
  std::optional<SignedByRule> signed_by;
  std::optional<AllowedStacksRule> allowed_stacks;
  std::optional<std::vector<std::string>> required_labels;
  std::optional<BaseImagesRule> base_images;
  bool no_setuid = false;
  std::optional<MaxSizeRule> max_size;
  std::optional<std::vector<AttestationRequirement>> attestations;
  DockerfileRules dockerfile;

  // Names of the image rules present, in evaluation order.
  std::vector<std::string> RuleNames() const;
};

// `text`: the policy's bytes; `dir`: the folder relative key paths resolve against;
// `what`: the file name errors start with.
Result<Policy> ParsePolicy(const std::string& text, const std::string& dir, const std::string& what);
Result<Policy> LoadPolicy(const std::string& path);

}  // namespace imgtool::policy
