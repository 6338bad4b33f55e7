// The checks the server uses: pod-spec image -> docker:// reference -> digest (a tag
// resolved through the registry client, cached briefly: tags move) -> the facts the
// policy needs (cached by repository@digest for the decision TTL: a digest never
// changes, so neither do its facts) -> the pure evaluator, on the reference as written
// (or pinned, in the mutating mode). An index is judged as `policy check` judges it: its
// own digest's signatures, each platform's image for the other rules.
//
// Start returns at once: the registry work runs on the caches' threads, a resolved tag
// starts its facts straight away, and the review (decide.h) collects every image against
// one deadline. Registry work running at once is capped per checker (one per server):
// beyond the cap an uncached image is denied at once rather than queued.
//
// Not here: Kubernetes JSON (review.h, decide.h) or HTTP (server.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "admission/cache.h"
#include "admission/decide.h"
#include "admission/policy_sets.h"
#include "policy/facts.h"
#include "policy/policy.h"
#include "remote/registry.h"

namespace imgtool::admission {

struct CheckerOptions {
  std::chrono::milliseconds decision_ttl{std::chrono::minutes(5)};
  std::chrono::milliseconds tag_ttl{std::chrono::seconds(30)};
  // Tag resolutions and facts gatherings running at once (a thread each, plus one for a
  // signature check); each ends within the registry client's timeouts.
  size_t max_registry_work = 128;
  Clock clock = SteadyClock();
};

struct CheckerStats {
  uint64_t tag_hits = 0, tag_misses = 0, facts_hits = 0, facts_misses = 0;
  size_t tag_entries = 0, facts_entries = 0;
  uint64_t registry_errors = 0;  // tag resolutions and image opens that failed
};

class RegistryImageChecker {
 public:
  // `policy`: the one Start and AsStarter() judge by; the webhook passes each review's
  // own (policy_sets.h) to the overloads instead.
  RegistryImageChecker(policy::Policy policy, remote::RegistryOptions registry, const CheckerOptions& options);

  PendingCheck Start(const std::string& image, bool pin);
  // Under `policy`, a snapshot the review holds to its end. Facts are cached per policy
  // generation: a swapped policy gathers afresh (its keys may differ), one generation's
  // entries age out with the TTL.
  PendingCheck Start(const std::string& image, bool pin, const std::shared_ptr<const LoadedPolicy>& policy);
  // For the server's wiring: a std::function view of Start.
  CheckStarter AsStarter();
  CheckStarter AsStarter(std::shared_ptr<const LoadedPolicy> policy);

  CheckerStats Stats() const;

  // Waits until no registry work runs (true) or `within` passes (false). The work runs on
  // threads of its own that outlive reviews; a process must not exit while they are inside
  // the registry client, whose TLS state exit() frees under them (SIGSEGV at exit).
  bool WaitForRegistryWork(std::chrono::milliseconds within);
  size_t RegistryWorkRunning() const;

  // Shared with the computations, which may outlive the checker.
  struct State;

 private:
  std::shared_ptr<State> s_;
};

}  // namespace imgtool::admission
