// One request of the store's wire format (tcp_store.h) as its server reads it: parsed out
// of the bytes a connection has buffered so far, under the protocol's limits, resuming
// where it stopped when more arrive. Every byte is counted in the server's budget as it
// arrives (by the connection's buffer); a declared length is checked when its four bytes
// arrive, before any of what it declares. Internal to trainer/cluster.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
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

// Reads one request at a time out of a connection's buffered bytes. Each field is taken
// whole once its bytes are there, so a request that arrives in pieces is walked once in
// all (a WAIT of 65,536 keys sent a byte at a time costs no more than sent at once).
class StoreRequestParser {
 public:
  enum class Step { kDone, kMore, kBad };

  // `data`/`size`: every byte buffered since the request's first (the same bytes again,
  // and more, on the next call). kDone: *req holds the request, which took size_taken()
  // bytes; kMore: it needs more bytes; kBad: *why says why the peer must go (a limit, or
  // an op `gate` does not let through, refused at its first byte). `req` is the same
  // object on every call for one request (its WAIT overhead is charged as keys arrive);
  // Reset before the next request. `fill` false: only checks (what arrived is within the
  // limits) and does not fill *req; the next call with `fill` picks up from there.
  Step Parse(const char* data, size_t size, StoreGate gate, StoreRequest* req, std::string* why, bool fill = true);
  size_t size_taken() const { return pos_; }
  bool started() const { return pos_ > 0; }
  void Reset() { *this = StoreRequestParser(); }

 private:
  // Fields of the current op, in order; how many are done; where the next begins.
  size_t pos_ = 0;
  uint32_t done_ = 0;
  uint32_t wait_count_ = 0;  // WAIT: keys declared
  uint64_t wait_key_bytes_ = 0;
  std::vector<std::pair<size_t, uint32_t>> spans_;  // offset and length of each field's bytes
};

}  // namespace trainer
