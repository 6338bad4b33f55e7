#include "admission/checker.h"

#include <future>

#include "admission/review.h"
#include "policy/evaluate.h"
#include "policy/gather.h"
#include "policy/pinned.h"
#include "policy/signature_verifier.h"
#include "transport/open.h"

namespace imgtool::admission {

namespace {

// Waits for a shared computation up to `deadline`; the computation itself carries on.
template <typename V>
Result<V> Await(const std::shared_future<V>& f, std::chrono::milliseconds deadline, const std::string& what) {
  if (f.wait_for(deadline) != std::future_status::ready) {
    return MakeError(ErrorKind::kTransport, what + ": no answer within " + std::to_string(deadline.count()) + " ms");
  }
  return f.get();
}

}  // namespace

RegistryImageChecker::RegistryImageChecker(policy::Policy policy, remote::RegistryOptions registry,
                                           CheckerOptions options)
    : policy_(std::move(policy)),
      registry_(std::move(registry)),
      options_(std::move(options)),
      digests_(options_.tag_ttl, options_.clock),
      facts_(options_.decision_ttl, options_.clock) {}

ImageChecker RegistryImageChecker::AsChecker() {
  return [this](const std::string& image, bool pin) { return Check(image, pin); };
}

Result<std::string> RegistryImageChecker::Resolve(const std::string& reference) {
  auto ref = ref::ParseReference(reference);
  if (!ref.ok()) return ref.error();
  if (!ref->digest.empty()) return ref->digest;
  auto opts = registry_;
  auto f = digests_.Get(reference, [opts, r = *ref]() -> std::pair<Result<std::string>, bool> {
    auto reg = remote::Registry::Connect(r.host, opts);
    if (!reg.ok()) return {reg.error().Context("resolving " + r.str()), false};
    auto d = (*reg)->ResolveDigest(r.repository, r.tag);
    if (!d.ok()) return {d.error().Context("resolving " + r.str()), false};
    return {d->str(), true};
  });
  auto got = Await(f, options_.deadline, "resolving " + reference);
  if (!got.ok()) return got.error();
  return *got;  // Result<Result<string>> -> Result<string>
}

policy::ReferenceFacts RegistryImageChecker::Facts(const std::string& pinned_reference) {
  // Copies, not `this`: the computation may outlive a request's deadline.
  auto f = facts_.Get(pinned_reference, [pol = policy_, opts = registry_,
                                         pinned_reference]() -> std::pair<policy::ReferenceFacts, bool> {
    // The signature check needs only the digest, not the opened image: run it beside the
    // open (about half an uncached check's round trips) and hand its answer to GatherFacts.
    std::future<policy::SignatureFacts> sig;
    if (pol.signed_by) {
      sig = std::async(std::launch::async, policy::RegistrySignatureVerifier(opts), pinned_reference, pol.signed_by->keys);
    }
    // Manifest and config now; layers stream later, only for the rules that read files.
    auto image = transport::Open(pinned_reference, opts);
    Result<oci::Node> opened = image.ok() ? Result<oci::Node>(image->node) : Result<oci::Node>(image.error());
    auto early = [&sig](const std::string&, const std::vector<std::string>&) { return sig.get(); };
    auto facts = policy::GatherFacts(pinned_reference, opened, pol, early);
    // An image of an index that could not be opened is asked for again, like the index.
    return {facts, policy::AllOpened(facts)};
  });
  auto got = Await(f, options_.deadline, "checking " + pinned_reference);
  if (got.ok()) return *got;
  policy::ReferenceFacts late;
  late.top.reference = pinned_reference;
  late.top.opened = got.error();
  return late;
}

Result<policy::ImageDecision> RegistryImageChecker::Check(const std::string& image, bool pin) {
  auto reference = DockerReference(image);
  if (!reference.ok()) return reference.error();
  auto ref = ref::ParseReference(*reference);
  if (!ref.ok()) return ref.error();
  auto digest = Resolve(*reference);
  policy::ReferenceFacts facts;
  if (digest.ok()) {
    ref::Reference pinned = *ref;
    pinned.tag.clear();
    pinned.digest = *digest;
    facts = Facts(pinned.str());
  } else {
    // Unresolvable: every rule fails with the cause (facts.h: an unopened image).
    facts.top.opened = digest.error();
  }
  // digestPinned judges the reference the pod runs: as written, or pinned by /mutate.
  facts.top.reference = pin && digest.ok() ? "docker://" + PinImage(ref->str().substr(9), *digest) : *reference;
  auto d = policy::Evaluate(policy_, facts);
  d.reference = image;
  d.digest = digest.ok() ? *digest : "";
  return d;
}

}  // namespace imgtool::admission
