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
SignatureFacts ByIdentities(const ref::Reference& ref, const SignedByRule& rule,
                            const remote::RegistryOptions& options) {
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

// The statements of the attestations that verified; else the verdict's reason.
// `keys`: c.key is a key file's path (shown by its name), else a keyless identity.
void Collect(const sign::SignatureVerdict& v, bool keys, AttestationFacts& out) {
  for (const auto& c : v.signatures) {
    if (c.ok && !c.statement.empty()) out.verified.push_back({c.statement, keys ? fs::BaseName(c.key) : c.key});
  }
  if (out.verified.empty() && !v.reason.empty()) out.reason += (out.reason.empty() ? "" : "; ") + v.reason;
}

}  // namespace

AttestationFacts VerifyAttestationRequirement(const ref::Reference& pinned, const AttestationRequirement& r,
                                              const remote::RegistryOptions& options) {
  AttestationFacts out;
  if (!r.signed_by.keys.empty()) {
    auto verdict = sign::VerifyImageAttestations(pinned, r.signed_by.keys, r.predicate_type, options);
    if (!verdict.ok()) return {{}, verdict.error().message};
    Collect(*verdict, true, out);
  }
  if (r.signed_by.identities.empty()) return out;
  auto root = sigstore::LoadTrustedRoot(r.signed_by.trusted_root);
  if (!root.ok()) {
    out.reason += std::string(out.reason.empty() ? "" : "; ") + "trustedRoot: " + root.error().message;
    return out;
  }
  auto shared = std::make_shared<const sigstore::TrustedRoot>(std::move(*root));
  for (const IdentityRule& id : r.signed_by.identities) {
    sign::KeylessPolicy policy{{id.subject, id.subject_regexp, id.issuer, id.issuer_regexp}, shared, {}};
    auto verdict = sign::VerifyImageKeyless(pinned, policy, true, r.predicate_type, options);
    if (!verdict.ok()) {
      out.reason += (out.reason.empty() ? "" : "; ") + verdict.error().message;
      continue;
    }
    Collect(*verdict, false, out);
  }
  return out;
}

AttestationVerifier RegistryAttestationVerifier(const remote::RegistryOptions& options) {
  return [options](const std::string& reference, const AttestationRequirement& r) -> AttestationFacts {
    auto pinned = ParsePinnedReference(reference);
    if (!pinned.ok()) return {{}, pinned.error().message};
    return VerifyAttestationRequirement(pinned->ref, r, options);
  };
}

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
