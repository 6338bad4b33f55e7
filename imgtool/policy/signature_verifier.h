// signedBy and attestations for the policy engine (`imgtool policy check`, the admission webhook): the
// signatures of an image in any repository (a layout, an archive, a registry),
// checked by imgtool/sign. Kept apart from imgtool_policy, which links no backend.
#pragma once

#include "policy/facts.h"
#include "ref/reference.h"
#include "remote/registry.h"

namespace imgtool::policy {

// An error of any kind fails the rule, never passes it.
SignatureVerifier RegistrySignatureVerifier(const remote::RegistryOptions& options);

// The attestations rule's seam: the attestations (sha256-<hex>.att, and keyless also
// Sigstore bundle referrers) of the requirement's predicate type that its keys or
// identities verify and whose subject names the digest, with their statements. An error
// of any kind is a reason with nothing verified.
AttestationVerifier RegistryAttestationVerifier(const remote::RegistryOptions& options);
// The same for a reference already pinned to the digest to judge (`imgtool verify`).
AttestationFacts VerifyAttestationRequirement(const ref::Reference& pinned, const AttestationRequirement& requirement,
                                              const remote::RegistryOptions& options);

}  // namespace imgtool::policy
