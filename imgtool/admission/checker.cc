#include "admission/checker.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <optional>

#include "admission/review.h"
#include "policy/evaluate.h"
#include "policy/gather.h"
#include "policy/pinned.h"
#include "policy/signature_verifier.h"
#include "transport/open.h"

namespace imgtool::admission {

using TimePoint = std::chrono::steady_clock::time_point;

namespace {

// The registry work runs on threads of its own (cache.h) and frees its slot in the work
// limit when `compute` returns; WaitForRegistryWork trusts that nothing of OpenSSL runs on
// the thread after that. OpenSSL would otherwise clean this thread's state up only as
// the thread exits, taking a global lock that exit() may already have freed.
template <typename Compute>
auto EndingOpenSslOnReturn(Compute compute) {
  return [compute = std::move(compute)]() {
    auto out = compute();
    OPENSSL_thread_stop();
    return out;
  };
}

}  // namespace

struct RegistryImageChecker::State {
  std::shared_ptr<const LoadedPolicy> policy;  // Start's without a policy of its own
  remote::RegistryOptions registry;
  std::shared_ptr<WorkLimit> limit;
  TtlCache<Result<std::string>> digests;  // docker://HOST/REPO:TAG -> sha256:...
  // "GENERATION docker://HOST/REPO@sha256:..." -> facts (an index's: all its images')
  TtlCache<policy::ReferenceFacts> facts;
  // Shared with the computations, which may outlive the state.
  std::shared_ptr<std::atomic<uint64_t>> registry_errors = std::make_shared<std::atomic<uint64_t>>(0);

  State(policy::Policy p, remote::RegistryOptions r, const CheckerOptions& o)
      : policy(std::make_shared<const LoadedPolicy>(LoadedPolicy{std::move(p), NextPolicyGeneration(), ""})),
        registry(std::move(r)),
        limit(std::make_shared<WorkLimit>(o.max_registry_work, std::max<size_t>(1, o.max_registry_work / 2))),
        digests(o.tag_ttl, o.clock, 10000, limit),
        facts(o.decision_ttl, o.clock, 10000, limit) {}

  Error AtCapacity() const {
    return MakeError(ErrorKind::kTransport, "registry checks at capacity until the deadline (" +
                                                std::to_string(limit->max()) + " at once, " +
                                                std::to_string(limit->max_per_group()) + " per registry)");
  }

  // start() until it gets a slot or `deadline` passes (nullopt): a check over the cap waits
  // for one to end rather than failing at once.
  template <typename Start>
  auto StartWithin(const Start& start, const std::string& host, TimePoint deadline) -> decltype(start()) {
    for (;;) {
      if (auto f = start()) return f;
      if (!limit->WaitForRoom(host, deadline)) return std::nullopt;
    }
  }

  // Copies, not `this`, in the computations: they may outlive a review's deadline.
  std::optional<std::shared_future<policy::ReferenceFacts>> StartFacts(
      const std::string& host, const std::string& pinned_reference, const std::shared_ptr<const LoadedPolicy>& loaded) {
    return facts.Get(std::to_string(loaded->generation) + " " + pinned_reference,
                     EndingOpenSslOnReturn([loaded, opts = registry, pinned_reference,
                                            errors = registry_errors]() -> std::pair<policy::ReferenceFacts, bool> {
                       const policy::Policy& pol = loaded->policy;
                       // The signature check needs only the digest, not the opened image: run it beside the
                       // open (about half an uncached check's round trips) and hand its answer to GatherFacts.
                       std::future<policy::SignatureFacts> sig;
                       if (pol.signed_by) {
                         sig = std::async(std::launch::async, policy::RegistrySignatureVerifier(opts), pinned_reference,
                                          *pol.signed_by);
                       }
                       // Manifest and config now; layers stream later, only for the rules that read files.
                       auto image = transport::Open(pinned_reference, opts);
                       Result<oci::Node> opened =
                           image.ok() ? Result<oci::Node>(image->node) : Result<oci::Node>(image.error());
                       auto early = [&sig](const std::string&, const policy::SignedByRule&) { return sig.get(); };
                       auto facts = policy::GatherFacts(pinned_reference, opened, pol, early,
                                                        policy::RegistryAttestationVerifier(opts));
                       // An image of an index that could not be opened is asked for again, like the index.
                       bool all_opened = policy::AllOpened(facts);
                       if (!all_opened) ++*errors;
                       return {facts, all_opened};
                     }),
                     host);
  }

  // A resolved tag starts its facts at once (`self` is this state), so a review's images
  // overlap both steps instead of waiting on each other.
  // The facts started are `loaded`'s; a review under another policy starts its own on a hit.
  std::optional<std::shared_future<Result<std::string>>> StartResolve(
      const std::shared_ptr<State>& self, const ref::Reference& r, const std::shared_ptr<const LoadedPolicy>& loaded) {
    return digests.Get(r.str(), EndingOpenSslOnReturn([self, r, loaded]() -> std::pair<Result<std::string>, bool> {
                         auto reg = remote::Registry::Connect(r.host, self->registry);
                         if (!reg.ok())
                           return {reg.error().Context("resolving " + r.str()), (++*self->registry_errors, false)};
                         auto d = (*reg)->ResolveDigest(r.repository, r.tag);
                         if (!d.ok())
                           return {d.error().Context("resolving " + r.str()), (++*self->registry_errors, false)};
                         self->StartFacts(r.host, Pinned(r, d->str()), loaded);
                         return {d->str(), true};
                       }),
                       r.host);
  }

  static std::string Pinned(ref::Reference r, const std::string& digest) {
    r.tag.clear();
    r.digest = digest;
    return r.str();
  }

  using FactsFuture = std::optional<std::shared_future<policy::ReferenceFacts>>;

  // The facts of `digest` (`started` when they are) by `deadline`, then the evaluator;
  // nullopt when they did not come.
  std::optional<Result<policy::ImageDecision>> Decide(const std::shared_ptr<const LoadedPolicy>& loaded,
                                                      const std::string& image, const std::string& reference,
                                                      const ref::Reference& r, const Result<std::string>& digest,
                                                      bool pin, TimePoint deadline, const FactsFuture& started = {}) {
    policy::ReferenceFacts got;
    if (digest.ok()) {
      auto f = started ? started
                       : StartWithin([&] { return StartFacts(r.host, Pinned(r, *digest), loaded); }, r.host, deadline);
      if (!f) {
        got.top.opened = AtCapacity();
      } else if (f->wait_until(deadline) != std::future_status::ready) {
        return std::nullopt;
      } else {
        got = f->get();
      }
    } else {
      // Unresolvable: every rule fails with the cause (facts.h: an unopened image).
      got.top.opened = digest.error();
    }
    // digestPinned judges the reference the pod runs: as written, or pinned by /mutate.
    got.top.reference = pin && digest.ok() ? "docker://" + PinImage(r.str().substr(9), *digest) : reference;
    auto d = policy::Evaluate(loaded->policy, got);
    d.reference = image;
    d.digest = digest.ok() ? *digest : "";
    return d;
  }
};

RegistryImageChecker::RegistryImageChecker(policy::Policy policy, remote::RegistryOptions registry,
                                           const CheckerOptions& options)
    : s_(std::make_shared<State>(std::move(policy), std::move(registry), options)) {}

bool RegistryImageChecker::WaitForRegistryWork(std::chrono::milliseconds within) {
  return s_->limit->WaitIdle(std::chrono::steady_clock::now() + within);
}

size_t RegistryImageChecker::RegistryWorkRunning() const { return s_->limit->running(); }

CheckStarter RegistryImageChecker::AsStarter() {
  return [this](const std::string& image, bool pin) { return Start(image, pin); };
}

CheckStarter RegistryImageChecker::AsStarter(std::shared_ptr<const LoadedPolicy> policy) {
  return [this, policy = std::move(policy)](const std::string& image, bool pin) { return Start(image, pin, policy); };
}

CheckerStats RegistryImageChecker::Stats() const {
  CheckerStats st;
  st.tag_hits = s_->digests.hits();
  st.tag_misses = s_->digests.misses();
  st.tag_entries = s_->digests.size();
  st.facts_hits = s_->facts.hits();
  st.facts_misses = s_->facts.misses();
  st.facts_entries = s_->facts.size();
  st.registry_errors = s_->registry_errors->load();
  return st;
}

PendingCheck RegistryImageChecker::Start(const std::string& image, bool pin) { return Start(image, pin, s_->policy); }

PendingCheck RegistryImageChecker::Start(const std::string& image, bool pin,
                                         const std::shared_ptr<const LoadedPolicy>& loaded) {
  auto failed = [](const Error& e) -> PendingCheck {
    return [e](TimePoint) -> std::optional<Result<policy::ImageDecision>> { return e; };
  };
  auto reference = DockerReference(image);
  if (!reference.ok()) return failed(reference.error());
  auto parsed = ref::ParseReference(*reference);
  if (!parsed.ok()) return failed(parsed.error());
  auto s = s_;
  std::string docker_ref = *reference;
  ref::Reference r = *parsed;
  if (!r.digest.empty()) {
    auto started = s->StartFacts(r.host, State::Pinned(r, r.digest), loaded);  // if there is room now
    return [s, loaded, image, docker_ref, r, pin, started](TimePoint deadline) {
      return s->Decide(loaded, image, docker_ref, r, Result<std::string>(r.digest), pin, deadline, started);
    };
  }
  auto started = s->StartResolve(s, r, loaded);
  return [s, loaded, image, docker_ref, r, pin,
          started](TimePoint deadline) -> std::optional<Result<policy::ImageDecision>> {
    auto resolving =
        started ? started : s->StartWithin([&] { return s->StartResolve(s, r, loaded); }, r.host, deadline);
    if (!resolving) {
      Result<std::string> none = s->AtCapacity().Context("resolving " + docker_ref);
      return s->Decide(loaded, image, docker_ref, r, none, pin, deadline);
    }
    if (resolving->wait_until(deadline) != std::future_status::ready) return std::nullopt;
    return s->Decide(loaded, image, docker_ref, r, resolving->get(), pin, deadline);
  };
}

}  // namespace imgtool::admission
