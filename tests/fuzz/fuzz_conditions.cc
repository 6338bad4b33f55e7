// The attestations rule's conditions (imgtool/policy/conditions.h): the policy's
// conditions (JSON pointers, operators, every/any/none nesting, regexps, Debian versions)
// and their evaluation against a predicate, the signer's JSON. The input is
// CONDITIONS \0 PREDICATE: the conditions parsed and, when they parse, evaluated against
// the predicate; the predicate is also judged by a fixed set that walks arrays, follows
// '*', compares versions and matches a regexp. Without a 0 byte the whole input is the
// predicate. Inputs may be nesting recipes (fuzz_util.h, ExpandNesting).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "oci/canonical_json.h"
#include "policy/conditions.h"

namespace {

using namespace imgtool;

const std::vector<policy::Condition>& Fixed() {
  static const std::vector<policy::Condition> fixed = [] {
    auto c = policy::ParseConditions(oci::Json::parse(R"([
      {"pointer": "/runDetails/builder/id", "equals": "https://ci.example/builder"},
      {"pointer": "/runDetails/builder/id", "matches": "^https://ci\\.example/(a|b)+$"},
      {"pointer": "/buildDefinition/resolvedDependencies/*/digest/sha256", "present": true},
      {"pointer": "/buildDefinition/resolvedDependencies", "any": [{"pointer": "/uri", "oneOf": ["a", 1, null]}]},
      {"pointer": "/packages", "none": [{"pointer": "/name", "equals": "openssl"},
                                        {"pointer": "/versionInfo", "versionBelow": "3.0.11-1"}]},
      {"pointer": "/packages/*/versionInfo", "versionAtLeast": "1:0~rc1"},
      {"pointer": "/a~1b/~0", "absent": true},
      {"pointer": "", "every": [{"pointer": "/*/*/x", "present": true}]}])"),
                                     "fixed");
    if (!c.ok()) std::abort();
    return *c;
  }();
  return fixed;
}

void Judge(const std::vector<policy::Condition>& conditions, const oci::Json& predicate) {
  size_t steps = 0;
  auto o = policy::EvaluateConditions(conditions, predicate, steps);
  if (steps > policy::kMaxConditionSteps + 1) std::abort();  // the cap stops a walk at once
  (void)o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string doc = fuzz::NestedInput(data, size);
  size_t zero = doc.find('\0');
  std::string_view predicate_text = doc;
  std::optional<std::vector<policy::Condition>> conditions;
  if (zero != std::string::npos) {
    predicate_text = std::string_view(doc).substr(zero + 1);
    auto j = oci::ParseJson(std::string_view(doc).substr(0, zero), "conditions");
    if (j.ok()) {
      auto c = policy::ParseConditions(*j, "$.conditions");
      if (c.ok()) conditions = std::move(*c);
    }
  }
  auto predicate = oci::ParseJson(predicate_text, "predicate");
  if (!predicate.ok()) return 0;
  if (conditions) Judge(*conditions, *predicate);
  Judge(Fixed(), *predicate);
  return 0;
}
