// The ImageChecker the server uses: pod-spec image -> docker:// reference -> digest (a
// tag resolved through the registry client, cached briefly: tags move) -> the facts the
// policy needs (cached by repository@digest for the decision TTL: a digest never
// changes, so neither do its facts) -> the pure evaluator, on the reference as written
// (or pinned, in the mutating mode). An index is judged as `policy check` judges it: its
// own digest's signatures, each platform's image for the other rules. Each wait has a deadline so a registry that does
// not answer denies in time instead of hanging the API server.
//
// Not here: Kubernetes JSON (review.h, decide.h) or HTTP (server.h).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "admission/cache.h"
#include "admission/decide.h"
#include "policy/facts.h"
#include "policy/policy.h"
#include "remote/registry.h"

namespace imgtool::admission {

struct CheckerOptions {
  std::chrono::milliseconds decision_ttl{std::chrono::minutes(5)};
  std::chrono::milliseconds tag_ttl{std::chrono::seconds(30)};
  std::chrono::milliseconds deadline{std::chrono::seconds(8)};  // per image, under the API server's 10 s
  Clock clock = SteadyClock();
};

class RegistryImageChecker {
 public:
  RegistryImageChecker(policy::Policy policy, remote::RegistryOptions registry, CheckerOptions options);

  Result<policy::ImageDecision> Check(const std::string& image, bool pin);
  // For the server's wiring: a std::function view of Check.
  ImageChecker AsChecker();

 private:
  Result<std::string> Resolve(const std::string& reference);
  policy::ReferenceFacts Facts(const std::string& pinned_reference);

  policy::Policy policy_;
  remote::RegistryOptions registry_;
  CheckerOptions options_;
  TtlCache<Result<std::string>> digests_;   // docker://HOST/REPO:TAG -> sha256:...
  TtlCache<policy::ReferenceFacts> facts_;  // docker://HOST/REPO@sha256:... -> facts (an index's: all its images')
};

// signedBy through imgtool/sign, the same check `imgtool policy check` runs: any error is
// a failure of the rule, never a pass.
policy::SignatureVerifier RegistrySignatureVerifier(const remote::RegistryOptions& options);

}  // namespace imgtool::admission
