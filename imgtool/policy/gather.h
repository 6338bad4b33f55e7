// Fact gathering: reads from an opened image only what the policy's rules need (the
// config and manifest always; /etc/passwd when User is a name; stack.json; a listing of
// every layer for setuid files; a decompressing pass for the uncompressed size) and asks
// the signature verifier when the policy has signedBy. Errors become facts, never
// exceptions to the decision (facts.h).
//
// Not here: opening the reference (transport::Open, in the CLI and the webhook, so no
// backend is linked here) or deciding (evaluate.h).
#pragma once

#include <string>

#include "oci/image.h"
#include "policy/facts.h"
#include "policy/policy.h"

namespace imgtool::policy {

// `reference`: the text the user gave; `opened`: the result of opening it. Layers are
// streamed from wherever the image is, only for the rules that read files.
ImageFacts GatherFacts(const std::string& reference, const Result<oci::Node>& opened, const Policy& policy,
                       const SignatureVerifier& verify_signature);

}  // namespace imgtool::policy
