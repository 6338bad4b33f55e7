#include "policy/signature_verifier.h"

#include "fs/atomic_file.h"
#include "policy/pinned.h"
#include "sign/verify_signatures.h"
#include "sigstore/trusted_root.h"

namespace imgtool::policy {

namespace {

SignatureFacts ByKeys(const ref::Reference& ref, const std::vector<std::string>& keys,
                      const remote::RegistryOptions& options) {
  auto verdict = sign::VerifyImageSignatures(ref, keys, options);
  if (!verdict.ok()) return {false, {verdict.error().message}};
  if (!verdict->verified) return {false, {verdict->reason}};
  std::string by;
  for (const auto& k : verdict->verified_keys) by += (by.empty() ? "" : ", ") + fs::BaseName(k);
  return {true, {"verified by " + by}};
}

// Each identity in turn, under the rule's trusted root; the first that verifies passes.
SignatureFacts ByIdentities(const ref::Reference& ref, const SignedByRule& rule, const remote::RegistryOptions& options) {
  auto root = sigstore::LoadTrustedRoot(rule.trusted_root);
  if (!root.ok()) return {false, {"trustedRoot: " + root.error().message}};
  auto shared = std::make_shared<const sigstore::TrustedRoot>(std::move(*root));
  SignatureFacts out;
  for (const IdentityRule& id : rule.identities) {
    sign::KeylessPolicy policy{{id.subject, id.subject_regexp, id.issuer, id.issuer_regexp}, shared, {}};
    auto verdict = sign::VerifyImageKeyless(ref, policy, false, "", options);
    if (!verdict.ok()) return {false, {verdict.error().message}};
    if (verdict->verified) return {true, {"verified keyless: " + verdict->verified_keys[0]}};
    out.reasons.push_back(verdict->reason);
  }
  return out;
}

}  // namespace

SignatureVerifier RegistrySignatureVerifier(const remote::RegistryOptions& options) {
  return [options](const std::string& reference, const SignedByRule& rule) -> SignatureFacts {
    auto pinned = ParsePinnedReference(reference);
    if (!pinned.ok()) return {false, {pinned.error().message}};
    SignatureFacts out;
    if (!rule.keys.empty()) {
      out = ByKeys(pinned->ref, rule.keys, options);
      if (out.verified) return out;
    }
    if (rule.identities.empty()) return out;
    SignatureFacts keyless = ByIdentities(pinned->ref, rule, options);
    if (keyless.verified) return keyless;
    out.reasons.insert(out.reasons.end(), keyless.reasons.begin(), keyless.reasons.end());
    return out;
  };
}

}  // namespace imgtool::policy
