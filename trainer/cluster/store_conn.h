// One connection of the store's server, as its event loop keeps it: what has arrived and
// not been answered, the request being read, the replies not yet sent, a parked WAIT.
// Internal to trainer/cluster (tcp_store_server.cc, tcp_store_loop.cc).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cluster/store_auth.h"
#include "cluster/store_budget.h"
#include "cluster/store_request.h"
#include "cluster/tcp_store.h"

namespace trainer {

// epoll's tags for the two descriptors that are not connections (connection ids start at 1).
constexpr uint64_t kListenId = 0;
constexpr uint64_t kWakeId = ~uint64_t{0};

// A connection's deadlines, each kept apart: what happens when one passes.
enum LateKind : int {
  kLateFirst,    // a new connection sent no request: dropped
  kLateRequest,  // a request is still incomplete: dropped
  kLateReply,    // the peer stopped reading its replies: dropped
  kLateWait,     // a WAIT's timeout: it is answered with what exists
  kLateKinds
};

// Replies up to this size are gathered before they are written (a pipelining client gets
// many in one write); a GET's value past kCopiedValue is written from the store's own
// copy, held by reference, and nothing more is answered until it is out.
constexpr size_t kReplyBatch = 64u << 10;
constexpr size_t kCopiedValue = 4u << 10;

// One connection's side of the handshake.
struct TcpStoreServer::Session {
  std::string peer;                        // "10.0.0.2:41234"
  std::optional<store_auth::Nonce> nonce;  // sent in reply to its HELLO
  int64_t rank = -1;                       // its granted claim
  std::string who;                         // "10.0.0.2:41234 (pid 12 on node-a)", once it claims
};

struct TcpStoreServer::Conn {
  Conn(uint64_t i, int f, const std::string& peer, StoreBudget& b)
      : id(i), fd(f), session{peer, {}, -1, ""}, budget(b) {}
  ~Conn() { budget.Give(in_charged); }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // A reply, in order after the others queued.
  void Reply(const std::string& bytes, std::shared_ptr<const StoreEntry> value) {
    out.append(bytes);
    if (value && value->value.size() <= kCopiedValue) {
      out.append(value->value);
    } else if (value) {
      out_value = std::move(value);
    }
  }
  bool must_flush() const { return out.size() - out_pos >= kReplyBatch || out_value || close_after_reply; }
  bool reply_pending() const { return out_pos < out.size() || out_value; }

  const uint64_t id;
  int fd;
  bool closed = false;
  Session session;
  StoreBudget& budget;
  uint32_t events = 0;  // what epoll watches for it now

  // Bytes arrived and not yet answered: in[in_pos..], counted in the budget.
  std::string in;
  size_t in_pos = 0;
  uint64_t in_charged = 0;
  StoreRequestParser parser;
  std::unique_ptr<StoreRequest> req;  // the request being read (its WAIT overhead charged)

  // Replies not yet written: out[out_pos..], then out_value[value_pos..].
  std::string out;
  size_t out_pos = 0;
  std::shared_ptr<const StoreEntry> out_value;
  size_t value_pos = 0;
  bool close_after_reply = false;
  bool blocked = false;  // the peer took less than we had: nothing more is answered until it reads

  // A parked WAIT: its keys before wait_next exist; filed under keys[wait_next].
  std::unique_ptr<StoreRequest> wait;
  size_t wait_next = 0;
  std::optional<Waiters::iterator> filed;
  bool parked = false;  // counted in TcpStoreServer::parked_

  std::optional<std::chrono::steady_clock::time_point> due[kLateKinds];
};

}  // namespace trainer
