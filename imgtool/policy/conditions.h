// Conditions on an attestation's predicate (the attestations rule,
// policies/rules/attestations.md): a JSON pointer (RFC 6901) into the predicate and one
// operator. Parsed strictly from the policy (an unknown field or operator, two operators,
// a bad regexp or version, nesting past kMaxConditionDepth: an error naming the JSON
// path), evaluated purely against the predicate's JSON.
//
// Evaluation is three-valued: a condition holds, does not hold, or cannot be evaluated
// (the pointer is missing for equals, the target of every is not an array, ...). Only
// "holds" passes; the other two fail closed with a reason naming the pointer.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oci/canonical_json.h"
#include "oci/result.h"
#include "regexp/go_regexp.h"

namespace imgtool::policy {

// every/any/none inside every/any/none, at most this deep: checked while parsing, before
// the parser recurses (a `*` in a pointer counts as one level).
inline constexpr int kMaxConditionDepth = 8;
// Elements of one array an every/any/none walks; a longer array fails closed. An SPDX
// document of a large CUDA image lists a few thousand packages.
inline constexpr size_t kMaxConditionArray = 100000;
// Condition evaluations (one per condition per element reached) for one attestation;
// past it the attestation fails closed naming the cap.
inline constexpr size_t kMaxConditionSteps = 1000000;
// Reference tokens in one pointer.
inline constexpr size_t kMaxPointerTokens = 64;

enum class ConditionOp {
  kEquals,
  kMatches,
  kOneOf,
  kPresent,
  kAbsent,
  kEvery,
  kAny,
  kNone,
  kVersionBelow,
  kVersionAtLeast
};

// clang-tidy 14 reports the implicit special members as throwing: it reads nlohmann::json's
// destructor so; they only move and destroy strings, vectors, a shared_ptr and json.
struct Condition {                  // NOLINT(bugprone-exception-escape)
  std::string pointer;              // as written, for reasons
  std::vector<std::string> tokens;  // decoded (~1 -> '/', ~0 -> '~')
  ConditionOp op = ConditionOp::kPresent;
  oci::Json value;                         // equals: the value; oneOf: the array
  std::optional<regexp::GoRegexp> regexp;  // matches
  std::string version;                     // versionBelow / versionAtLeast
  std::vector<Condition> nested;           // every / any / none
};

// `j`: the array of conditions; `where`: its JSON path ("$.rules.attestations[0].conditions").
Result<std::vector<Condition>> ParseConditions(const oci::Json& j, const std::string& where);

struct ConditionOutcome {
  enum class State { kHolds, kFails, kUnevaluable } state = State::kFails;
  std::string why;  // names the pointer (absolute within the predicate) and what was found
  bool holds() const { return state == State::kHolds; }
};

// All of `conditions` against `predicate`. `steps` counts evaluations across calls (one
// attestation's budget); past kMaxConditionSteps the outcome is kUnevaluable.
ConditionOutcome EvaluateConditions(const std::vector<Condition>& conditions, const oci::Json& predicate,
                                    size_t& steps);

// The name of an operator as the policy writes it ("versionBelow").
std::string OperatorName(ConditionOp op);

}  // namespace imgtool::policy
