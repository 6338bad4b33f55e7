#include "cluster/store_keys.h"

namespace trainer {
namespace {

bool IsLowerHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// "3" -> 3; "03", "", "3a", "99999999999" -> false.
bool CanonicalRank(std::string_view s, uint32_t* rank) {
  if (s.empty() || s.size() > 8 || (s.size() > 1 && s[0] == '0')) return false;
  uint32_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  if (v >= kStoreMaxRank) return false;
  *rank = v;
  return true;
}

}  // namespace

KeyOwner OwnerOf(std::string_view key) {
  const size_t slash = key.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? key : key.substr(slash + 1);
  KeyOwner owner;
  if (CanonicalRank(last, &owner.rank)) return owner;
  constexpr std::string_view kSha = "sha256:";
  if (last.size() == kSha.size() + 64 && last.substr(0, kSha.size()) == kSha && IsLowerHex(last.substr(kSha.size()))) {
    owner.kind = KeyOwner::kShared;
    return owner;
  }
  owner.rank = 0;  // the chief's
  return owner;
}

std::string DescribeOwner(const KeyOwner& owner) {
  if (owner.kind == KeyOwner::kShared) return "any rank";
  return owner.rank == 0 ? "rank 0 (the chief)" : "rank " + std::to_string(owner.rank);
}

}  // namespace trainer
