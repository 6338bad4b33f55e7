// Judging an index as one reference. The rules about the reference judge the index's own
// facts: digestPinned the text as written, signedBy the signatures and attestations the
// attestations on the index's digest (cosign signs and attests an index by its own digest). Every other rule judges
// each image entry on its own, and the row passes only when every image passes; a failing row names each platform and
// digest that broke it. Pure, like evaluate.cc, whose per-image rules it reuses unchanged.
#include <algorithm>
#include <utility>

#include "policy/evaluate.h"

namespace imgtool::policy {

namespace {

// How many failing images one reason names before "and N more": a denial is read by a
// person, and the first cause should not drown under 64 platforms' worth.
constexpr size_t kShownFailures = 5;

// cosign signs and attests an index by its own digest: signedBy and attestations judge it.
bool JudgesReference(const std::string& rule) {
  return rule == "digestPinned" || rule == "signedBy" || rule == "attestations";
}

// "sha256:" and 12 hex digits, as oci::Digest::Short writes it.
std::string Short(const std::string& digest) { return digest.substr(0, 19); }

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// "linux/amd64, linux/arm64: uid 10001": platforms that pass for the same reason share it.
std::string PassReason(const std::vector<std::pair<std::string, std::string>>& passes) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // reason -> platforms, in index order
  for (const auto& pass : passes) {
    const std::string& reason = pass.second;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == reason; });
    if (it == groups.end()) {
      groups.push_back({reason, {pass.first}});
    } else {
      it->second.push_back(pass.first);
    }
  }
  std::vector<std::string> parts;
  for (const auto& [reason, platforms] : groups) parts.push_back(Join(platforms, ", ") + ": " + reason);
  return Join(parts, "; ");
}

std::string FailReason(std::vector<std::string> failures) {
  size_t more = failures.size() > kShownFailures ? failures.size() - kShownFailures : 0;
  failures.resize(failures.size() - more);
  return Join(failures, "; ") + (more ? "; and " + std::to_string(more) + " more" : "");
}

RuleResult AcrossImages(const Policy& p, const std::string& rule, const IndexFacts& index) {
  if (!index.bounded.ok()) return {rule, false, index.bounded.error().message};
  if (index.images.empty()) {
    // Nothing judged is no evidence: an index of artifacts alone fails closed.
    std::string why = index.skipped.empty() ? "it has no entries" : "skipped " + Join(index.skipped, "; ");
    return {rule, false, "no image in the index to judge: " + why};
  }
  std::vector<std::string> failures;
  std::vector<std::pair<std::string, std::string>> passes;  // platform, reason
  for (const auto& c : index.images) {
    RuleResult r = c.image.opened.ok()
                       ? EvaluateRule(p, rule, c.image)
                       : RuleResult{rule, false, "cannot open the image: " + c.image.opened.error().message};
    if (r.pass) {
      passes.emplace_back(c.platform, r.reason);
    } else {
      failures.push_back(c.platform + " " + Short(c.image.digest) + ": " + r.reason);
    }
  }
  if (!failures.empty()) return {rule, false, FailReason(std::move(failures))};
  return {rule, true, PassReason(passes)};
}

}  // namespace

ImageDecision EvaluateIndex(const Policy& p, const ImageFacts& top, const IndexFacts& index) {
  ImageDecision d;
  d.reference = top.reference;
  d.digest = top.digest;
  d.skipped = index.skipped;
  for (const auto& n : p.RuleNames()) {
    d.rules.push_back(JudgesReference(n) ? EvaluateRule(p, n, top) : AcrossImages(p, n, index));
  }
  d.pass = !d.rules.empty();
  for (const auto& r : d.rules) d.pass = d.pass && r.pass;
  return d;
}

ImageDecision Evaluate(const Policy& p, const ReferenceFacts& f) {
  // An unopened reference is not known to be an index: every rule fails, as for an image.
  if (!f.index || !f.top.opened.ok()) return Evaluate(p, f.top);
  return EvaluateIndex(p, f.top, *f.index);
}

}  // namespace imgtool::policy
