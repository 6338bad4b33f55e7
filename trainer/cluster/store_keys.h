// Who may write a key of the rendezvous store (tcp_store.h). The owner follows from the
// key's last '/'-separated part, so every user of the store (the trainer's rendezvous,
// Gloo's mesh, shared memory set-up, the fleet check) gets the same rule without telling
// the server anything:
//   ".../<rank>"            a rank's own: "fp/3", "arrive/3", "gloo/addr/3", "3". Only the
//                           connection that claimed that rank writes it. The rank is
//                           canonical decimal ("03" is not rank 3) below kStoreMaxRank.
//   ".../sha256:<64 hex>"   content-addressed and shared ("fpfull/sha256:ab..."): any rank
//                           that claimed one may write it; whoever reads it can check the
//                           content against its name.
//   anything else           the chief's (rank 0): "verdict", "go", "shm/segment".
// Every key is write-once whoever owns it: a second SET is refused, never applied.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace trainer {

// Ranks a claim may name; TF_CONFIG jobs are far smaller.
inline constexpr uint32_t kStoreMaxRank = 1u << 24;

struct KeyOwner {
  enum Kind { kRank, kShared } kind = kRank;
  uint32_t rank = 0;  // kRank: whose (the chief's keys are rank 0's)
};

KeyOwner OwnerOf(std::string_view key);

// "rank 3", "any rank": for messages.
std::string DescribeOwner(const KeyOwner& owner);

}  // namespace trainer
