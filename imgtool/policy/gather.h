// Fact gathering: reads from an opened image only what the policy's rules need (the
// config and manifest always; /etc/passwd when User is a name, stack.json and the setuid
// files from one view of the unpacked image, rootfs/image_fs.h; a decompressing pass for
// the uncompressed size) and asks
// the signature verifier when the policy has signedBy, the attestation verifier per
// requirement when it has attestations. For an index, the same for each
// image entry, and the verifier once, for the index's own digest. Errors become facts,
// never exceptions to the decision (facts.h).
//
// Not here: opening the reference (transport::Open, in the CLI and the webhook, so no
// backend is linked here) or deciding (evaluate.h).
#pragma once

#include <cstddef>
#include <string>

#include "oci/image.h"
#include "policy/facts.h"
#include "policy/policy.h"

namespace imgtool::policy {

// Entries beyond this fail an index closed instead of being judged: each image costs a
// manifest and a config read (and layer scans for the rules that read files), and the
// webhook answers under a deadline. A real multi-platform index, with an attestation
// manifest per platform, has a small fraction of it.
inline constexpr size_t kMaxIndexEntries = 64;

// `reference`: the text the user gave; `opened`: the result of opening it. Layers are
// streamed from wherever the image is, only for the rules that read files.
// `verify_attestations`: for the attestations rule, asked once per requirement (for an
// index: about the index's digest); none given fails the rule closed.
ReferenceFacts GatherFacts(const std::string& reference, const Result<oci::Node>& opened, const Policy& policy,
                           const SignatureVerifier& verify_signature,
                           const AttestationVerifier& verify_attestations = {});

// Whether every image the facts speak of could be opened: what the webhook caches (an
// unreachable registry is asked again, not remembered).
bool AllOpened(const ReferenceFacts& facts);

}  // namespace imgtool::policy
