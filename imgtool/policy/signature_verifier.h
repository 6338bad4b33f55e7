// signedBy for the policy engine (`imgtool policy check`, the admission webhook): the
// signatures of an image in any repository (a layout, an archive, a registry),
// checked by imgtool/sign. Kept apart from imgtool_policy, which links no backend.
#pragma once

#include "policy/facts.h"
#include "remote/registry.h"

namespace imgtool::policy {

// An error of any kind fails the rule, never passes it.
SignatureVerifier RegistrySignatureVerifier(const remote::RegistryOptions& options);

}  // namespace imgtool::policy
