// The attestations rule (policies/rules/attestations.md): for each requirement, the
// attestations its signedBy verified (facts.h, gathered through the AttestationVerifier
// seam), and the first whose predicate satisfies every condition passes it. Pure: the
// statements are bytes in the facts, parsed here with the depth cap every JSON read has.
#include <utility>

#include "oci/canonical_json.h"
#include "policy/evaluate.h"

namespace imgtool::policy {

namespace {

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// One verified statement against the requirement: holds, or why not (naming the pointer).
ConditionOutcome Judge(const AttestationRequirement& r, const VerifiedStatement& s, size_t& steps) {
  using State = ConditionOutcome::State;
  auto j = oci::ParseJson(s.statement, "the in-toto statement");
  if (!j.ok()) return {State::kUnevaluable, j.error().message};
  if (!j->is_object() || oci::StringMember(*j, "predicateType") != r.predicate_type) {
    return {State::kUnevaluable, "the statement's predicateType is not " + r.predicate_type};
  }
  auto predicate = j->find("predicate");
  if (predicate == j->end()) return {State::kUnevaluable, "the statement has no predicate"};
  if (r.conditions.empty()) return {State::kHolds, "no conditions"};
  return EvaluateConditions(r.conditions, *predicate, steps);
}

}  // namespace

RuleResult EvaluateAttestationRequirement(const AttestationRequirement& r, const AttestationFacts& facts) {
  if (facts.verified.empty()) {
    std::string why = facts.reason.empty() ? "none verified" : facts.reason;
    return {r.name, false, "no verified attestation of type " + r.predicate_type + ": " + why};
  }
  size_t steps = 0;  // one budget for the requirement, however many attestations it reads
  std::string first_failure;
  for (const auto& s : facts.verified) {
    ConditionOutcome o = Judge(r, s, steps);
    if (o.holds()) return {r.name, true, "attestation signed by " + s.signer + ": " + o.why};
    if (first_failure.empty()) first_failure = o.why + " (attestation signed by " + s.signer + ")";
    if (steps > kMaxConditionSteps) break;
  }
  std::string more = facts.verified.size() > 1
                         ? "; none of " + std::to_string(facts.verified.size()) + " verified attestations satisfies it"
                         : "";
  return {r.name, false, first_failure + more};
}

std::vector<RuleResult> EvaluateAttestationRequirements(const std::vector<AttestationRequirement>& reqs,
                                                        const ImageFacts& f) {
  std::vector<RuleResult> out;
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (!f.attestations.ok()) {
      out.push_back({reqs[i].name, false, f.attestations.error().message});
    } else if (f.attestations->size() != reqs.size()) {
      out.push_back({reqs[i].name, false, "the attestation check was not gathered for every requirement"});
    } else {
      out.push_back(EvaluateAttestationRequirement(reqs[i], (*f.attestations)[i]));
    }
  }
  return out;
}

RuleResult EvaluateAttestations(const std::vector<AttestationRequirement>& reqs, const ImageFacts& f) {
  std::vector<std::string> failed, passed;
  for (const auto& r : EvaluateAttestationRequirements(reqs, f)) {
    (r.pass ? passed : failed).push_back(r.rule + ": " + r.reason);
  }
  if (!failed.empty()) return {"attestations", false, Join(failed, "; ")};
  return {"attestations", true, Join(passed, "; ")};
}

}  // namespace imgtool::policy
