// The decision: a policy and the facts about one image -> a result per rule with its
// reason. Pure (no I/O), so the admission server and `policy check` share it and tests
// feed it hand-written facts. Fails closed: a fact that could not be gathered fails every
// rule that needs it; an image that could not be opened fails every rule.
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
};

ImageDecision Evaluate(const Policy& policy, const ImageFacts& facts);

// The pieces, for tests and for callers with one rule in mind.
RuleResult EvaluateNonRoot(const ImageFacts& f);
RuleResult EvaluateDigestPinned(const ImageFacts& f);
RuleResult EvaluateSignedBy(const ImageFacts& f);
RuleResult EvaluateAllowedStacks(const AllowedStacksRule& r, const ImageFacts& f);
RuleResult EvaluateRequiredLabels(const std::vector<std::string>& labels, const ImageFacts& f);
RuleResult EvaluateBaseImages(const BaseImagesRule& r, const ImageFacts& f);
RuleResult EvaluateNoSetuid(const ImageFacts& f);
RuleResult EvaluateMaxSize(const MaxSizeRule& r, const ImageFacts& f);

}  // namespace imgtool::policy
