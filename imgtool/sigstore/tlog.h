// The transparency log's own word on a bundle's tlog entry: the signed entry timestamp
// (Rekor v1's inclusion promise) and the inclusion proof with its signed checkpoint.
// Whether the body of the entry says what the bundle says is entry_body.h's concern.
//
// Pick `log` with FindLogs(trusted_root.tlogs, entry.log_id); both functions refuse a log
// whose log_id is not the entry's.
#pragma once

#include "oci/result.h"
#include "sigstore/bundle.h"
#include "sigstore/trusted_root.h"

namespace imgtool::sigstore {

// Rekor v1's inclusion promise: the log's signature (ECDSA, over sha256) on the canonical
// JSON {"body":"<base64 body>","integratedTime":n,"logID":"<hex log id>","logIndex":n}.
// Also refuses an entry without integratedTime or SET, and an integratedTime outside the
// log key's validFor (the time the SET vouches for must be one the key was trusted at).
Status VerifySignedEntryTimestamp(const TlogEntry& entry, const LogKey& log);

// The inclusion proof: the Merkle path from the leaf (sha256(0x00 || canonicalized body))
// at proof.log_index leads to proof.root_hash in a tree of proof.tree_size leaves, AND the
// checkpoint (required) is signed by `log` (checkpoint.h) and names the same tree size and
// root hash. For Rekor v2 checkpoints the entry's log_index must also be the proof's (one
// tree per log there; Rekor v1's global index differs from the index in its shard).
Status VerifyInclusionProof(const TlogEntry& entry, const LogKey& log);

}  // namespace imgtool::sigstore
