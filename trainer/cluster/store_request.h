// One request of the store's wire format (tcp_store.h) as its server reads it: under the
// protocol's limits, its buffers grown only as bytes arrive, every byte counted in the
// server's budget first. Internal to trainer/cluster.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/store_budget.h"
#include "cluster/store_wire.h"
#include "cluster/tcp_store.h"

namespace trainer {

// One request as read, and its bytes in the budget (given back when it is answered; a
// SET hands them on to its StoreEntry).
struct StoreRequest {
  explicit StoreRequest(StoreBudget& b) : budget(b) {}
  ~StoreRequest() { budget.Give(charged); }
  StoreRequest(const StoreRequest&) = delete;
  StoreRequest& operator=(const StoreRequest&) = delete;
  bool Charge(uint64_t n) {
    if (!budget.Take(n)) return false;
    charged += n;
    return true;
  }
  StoreBudget& budget;
  uint64_t charged = 0;
  uint8_t op = 0;
  std::vector<std::string> keys;  // one, or a WAIT's
  std::string value;              // SET
  uint32_t wait_ms = 0;           // WAIT
  uint32_t rank = 0;              // CLAIM: the rank claimed
  std::string who;                // CLAIM: the claimant's own words ("pid 12 on node-a")
  std::string nonce;              // CLAIM: the client's nonce (store_auth::kNonceBytes)
  std::string proof;              // CLAIM: HMAC of store_auth::ClaimMessage, or empty
};

// Which requests a connection may send next: any, or (a store that requires the job
// token, before the connection proved it) HELLO and CLAIM only.
enum class StoreGate { kAny, kHandshakeOnly };

// Reads one request from fd into *r. `first`: the deadline for its op byte (a new
// connection's first request); none between requests; the rest of it must come within
// limits.io_timeout of that byte. false: the peer closed (*why stays empty), or broke a
// limit or the clock, or sent an op `gate` does not let through, which is refused at its
// first byte (*why says which, for the log).
bool ReadStoreRequest(int fd, const StoreLimits& limits, store_wire::Deadline first, StoreGate gate, StoreRequest* r,
                      std::string* why);

}  // namespace trainer
