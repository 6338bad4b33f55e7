// Fact gathering: reads from an opened image only what the policy's rules need (the
// config and manifest always; /etc/passwd when User is a name; stack.json; a listing of
// every layer for setuid files; a decompressing pass for the uncompressed size) and asks
// the signature verifier when the policy has signedBy. Errors become facts, never
// exceptions to the decision (facts.h).
//
// Not here: opening the reference (the CLI does, so docker:// stays out of this library)
// or deciding (evaluate.h).
#pragma once

#include <string>

#include "layout/oci_archive.h"
#include "policy/facts.h"
#include "policy/policy.h"

namespace imgtool::policy {

// `reference`: the text the user gave; `opened`: the result of opening it.
ImageFacts GatherFacts(const std::string& reference, const Result<layout::OpenedImage>& opened, const Policy& policy,
                       const SignatureVerifier& verify_signature);

// Opens a local reference, including the pinned form oci:DIR@sha256:... (pinned.h).
Result<layout::OpenedImage> OpenLocal(const std::string& reference);

}  // namespace imgtool::policy
