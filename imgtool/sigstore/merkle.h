// RFC 6962 / RFC 9162 Merkle trees, as Rekor (v1 and v2) builds its log: the leaf hash is
// sha256(0x00 || entry), an inner node sha256(0x01 || left || right). An inclusion proof
// is the list of sibling hashes from the leaf up to the root.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "oci/result.h"

namespace imgtool::sigstore {

// A proof for a tree of up to 2^64 leaves has at most 64 hashes.
inline constexpr size_t kMaxInclusionProofHashes = 64;

std::string MerkleLeafHash(std::string_view entry);
std::string MerkleNodeHash(std::string_view left, std::string_view right);

// The leaf at `index` of a tree of `tree_size` leaves, whose hash is `leaf_hash`, is in the
// tree whose root is `root_hash`, by the audit path `proof` (RFC 9162 2.1.3.2). Refuses
// index >= tree_size, hashes that are not 32 bytes, and paths too short or too long.
Status VerifyMerkleInclusion(int64_t index, int64_t tree_size, std::string_view leaf_hash,
                             const std::vector<std::string>& proof, std::string_view root_hash);

}  // namespace imgtool::sigstore
