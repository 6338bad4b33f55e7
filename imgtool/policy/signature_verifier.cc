#include "policy/signature_verifier.h"

#include "fs/atomic_file.h"
#include "policy/pinned.h"
#include "sign/verify_signatures.h"

namespace imgtool::policy {

SignatureVerifier RegistrySignatureVerifier(const remote::RegistryOptions& options) {
  return [options](const std::string& reference, const std::vector<std::string>& keys) -> SignatureFacts {
    auto pinned = ParsePinnedReference(reference);
    if (!pinned.ok()) return {false, {pinned.error().message}};
    auto verdict = sign::VerifyImageSignatures(pinned->ref, keys, options);
    if (!verdict.ok()) return {false, {verdict.error().message}};
    if (!verdict->verified) return {false, {verdict->reason}};
    std::string by;
    for (const auto& k : verdict->verified_keys) by += (by.empty() ? "" : ", ") + fs::BaseName(k);
    return {true, {"verified by " + by}};
  };
}

}  // namespace imgtool::policy
