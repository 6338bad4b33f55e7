// The decision: a policy and the facts about one image -> a result per rule with its
// reason. Pure (no I/O), so the admission server and `policy check` share it and tests
// feed it hand-written facts. Fails closed: a fact that could not be gathered fails every
// rule that needs it; an image that could not be opened fails every rule.
//
// An index is judged as one reference (evaluate_index.cc): digestPinned, signedBy and
// attestations on the index itself, every other rule on each of its images, passing only when every
// image passes it.
#pragma once

#include <string>
#include <vector>

#include "policy/facts.h"
#include "policy/policy.h"

namespace imgtool::policy {

struct RuleResult {
  std::string rule;  // "nonRoot", ...
  bool pass = false;
  std::string reason;
};

struct ImageDecision {
  std::string reference;
  std::string digest;
  bool pass = false;  // every rule passed
  std::vector<RuleResult> rules;
  std::vector<std::string> skipped;  // index entries not judged, with why (IndexFacts::skipped)
};

ImageDecision Evaluate(const Policy& policy, const ImageFacts& facts);
// An image, or an index (EvaluateIndex).
ImageDecision Evaluate(const Policy& policy, const ReferenceFacts& facts);
// `top`: the index's own facts; `index`: its entries. One row per rule, as for an image.
ImageDecision EvaluateIndex(const Policy& policy, const ImageFacts& top, const IndexFacts& index);

// The rule named `rule` ("nonRoot", ..., as Policy::RuleNames) on one image.
RuleResult EvaluateRule(const Policy& policy, const std::string& rule, const ImageFacts& f);

// The pieces, for tests and for callers with one rule in mind.
RuleResult EvaluateNonRoot(const ImageFacts& f);
RuleResult EvaluateDigestPinned(const ImageFacts& f);
RuleResult EvaluateSignedBy(const ImageFacts& f);
RuleResult EvaluateAllowedStacks(const AllowedStacksRule& r, const ImageFacts& f);
RuleResult EvaluateRequiredLabels(const std::vector<std::string>& labels, const ImageFacts& f);
RuleResult EvaluateBaseImages(const BaseImagesRule& r, const ImageFacts& f);
RuleResult EvaluateNoSetuid(const ImageFacts& f);
RuleResult EvaluateMaxSize(const MaxSizeRule& r, const ImageFacts& f);

// The attestations rule (evaluate_attestations.cc): one row "attestations" passing when
// every requirement passes, its reason naming each requirement that failed and why.
RuleResult EvaluateAttestations(const std::vector<AttestationRequirement>& reqs, const ImageFacts& f);
// One row per requirement (`rule` is the requirement's name), as `imgtool verify
// --attestation --policy` prints them.
std::vector<RuleResult> EvaluateAttestationRequirements(const std::vector<AttestationRequirement>& reqs,
                                                        const ImageFacts& f);
RuleResult EvaluateAttestationRequirement(const AttestationRequirement& r, const AttestationFacts& facts);

}  // namespace imgtool::policy
