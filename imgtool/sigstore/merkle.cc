#include "sigstore/merkle.h"

#include "sigstore/keys.h"

namespace imgtool::sigstore {

namespace {

constexpr size_t kHashSize = 32;

Error Refused(const std::string& why) { return MakeError(ErrorKind::kIntegrity, "inclusion proof: " + why); }

}  // namespace

std::string MerkleLeafHash(std::string_view entry) {
  std::string in(1, '\0');
  in.append(entry);
  return Sha256(in);
}

std::string MerkleNodeHash(std::string_view left, std::string_view right) {
  std::string in(1, '\1');
  in.append(left);
  in.append(right);
  return Sha256(in);
}

Status VerifyMerkleInclusion(int64_t index, int64_t tree_size, std::string_view leaf_hash,
                             const std::vector<std::string>& proof, std::string_view root_hash) {
  if (index < 0 || tree_size <= 0 || index >= tree_size) {
    return Refused("index " + std::to_string(index) + " is not in a tree of " + std::to_string(tree_size));
  }
  if (proof.size() > kMaxInclusionProofHashes) return Refused("more than 64 hashes");
  if (leaf_hash.size() != kHashSize || root_hash.size() != kHashSize) return Refused("a hash is not 32 bytes");
  // Walk up from the leaf: `node` is our position at this level, `last` the position of the
  // level's last node. A node that is a right child, or the last one with no right sibling
  // once its lone-right-edge levels are skipped, takes its sibling from the left.
  auto node = static_cast<uint64_t>(index);
  auto last = static_cast<uint64_t>(tree_size - 1);
  std::string hash(leaf_hash);
  for (const std::string& sibling : proof) {
    if (sibling.size() != kHashSize) return Refused("a hash is not 32 bytes");
    if (last == 0) return Refused("more hashes than the tree is high");
    if ((node & 1) != 0 || node == last) {
      hash = MerkleNodeHash(sibling, hash);
      // A last node that is a left child had no sibling at those levels: climb past them.
      while ((node & 1) == 0 && node != 0) {
        node >>= 1;
        last >>= 1;
      }
    } else {
      hash = MerkleNodeHash(hash, sibling);
    }
    node >>= 1;
    last >>= 1;
  }
  if (last != 0) return Refused("fewer hashes than the tree is high");
  if (hash != root_hash) return Refused("the path does not lead to the root hash");
  return Status::Ok();
}

}  // namespace imgtool::sigstore
