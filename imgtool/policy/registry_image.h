// docker:// images for the policy engine (`imgtool policy check`, the admission webhook).
// Manifest and config come from the registry; when a rule reads files (noSetuid, a user
// given by name, allowedStacks' stack.json, maxSize.uncompressedBytes) the image is
// pulled by digest into a temporary layout, every blob hashed, so those rules see its
// layers. Signatures are checked against the registry's sha256-<hex>.sig tag.
// Kept apart from imgtool_policy, which links no libcurl.
#pragma once

#include <string>

#include "layout/oci_archive.h"
#include "policy/facts.h"
#include "policy/policy.h"
#include "remote/registry.h"

namespace imgtool::policy {

// Whether the policy's rules need the layers of an image whose config User is `user`.
bool NeedsLayers(const Policy& policy, const std::string& user);

// Opens `ref` (docker://) for `policy`: manifest and config, plus the layers when
// NeedsLayers (in a temporary layout that lives as long as the returned image).
Result<layout::OpenedImage> OpenRegistryImage(const ref::Reference& ref, const remote::RegistryOptions& options,
                                              const Policy& policy);

// signedBy over a registry or layout reference (imgtool/sign); an error fails the rule.
SignatureVerifier RegistrySignatureVerifier(const remote::RegistryOptions& options);

}  // namespace imgtool::policy
