// A small key-value rendezvous store over TCP, served by the chief (the shape of
// PyTorch's TCPStore). Workers need only the chief's address, which TF_CONFIG already
// gives; no shared folder (Gloo's FileStore) and no extra service (its RedisStore).
//
// Who may write what (store_keys.h): every connection that writes first claims a rank,
// once; a rank is claimed by one connection for the life of the store, and a second claim
// is refused with a message naming both claimants (address, pid, host), which the server
// also keeps (TcpStoreServer::conflicts) so the chief can fail the job. A key ending in a
// rank is that rank's; keys are write-once. With a job token (job_token.h) the store
// admits only processes that prove they hold it: a challenge-response over fresh nonces
// (store_auth.h), the token never sent, and the store proves it back to the client.
// Without one it is open: anyone who reaches the port may read and claim a free rank, so
// an outsider can still disturb a job (a refused claim fails it) but cannot change what a
// rank published. Because anyone may reach the port, the server trusts no length, count
// or pace a peer declares either (the limits below).
//
// Wire format, all integers little-endian u32:
//   request  = op:u8 key_len key [value_len value]      op 1 SET, 2 GET, 3 CHECK
//            | op:u8 count (key_len key){count} timeout_ms   op 4 WAIT
//            | op:u8                                         op 5 HELLO
//            | op:u8 rank who_len who nonce:32 proof_len proof   op 6 CLAIM
//   reply    = SET: u8 status (0 stored; 1 exists, 2 denied: then len message)
//              GET: u8 found [len bytes]   CHECK: u8 found
//              WAIT: u8 found per key, sent once every key exists or timeout_ms passed
//              HELLO: u8 mode (0 open, 1 job token required) nonce:32 (the server's)
//              CLAIM: u8 status (0 granted, 1 refused) len bytes: the server's proof
//                     (empty when open), or why it refused (then it closes)
// A connection says HELLO, then CLAIMs its rank with `proof` = HMAC-SHA256 under the
// token of store_auth::ClaimMessage (both nonces, the rank, `who`); the server's proof is
// the HMAC of store_auth::ChiefMessage. Rank 0's key is not the job's token but one the
// server made at Start and only its own process holds (ChiefClaim). Before its claim is
// granted, a connection to a store with a token may send nothing else; to an open store,
// anything, but a SET is denied.
// WAIT blocks on the server (the connection is parked under the first key it misses, and a
// SET of that key looks at it again), so N waiting workers cost no polling. A server
// shutting down closes the connection instead of replying. One thread serves every
// connection (epoll): 10,000 workers are 10,000 sockets, not 10,000 threads. A client may
// pipeline requests (send several before reading); the replies come in order.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cluster/job_token.h"
#include "core/result.h"

namespace trainer {

// Protocol limits, the same for both ends: a client refuses to send more (kInvalidInput),
// a server drops a peer that declares more, before reading any of it. What the trainer
// and the fleet check store is far below them (trainer/README.md, "Store limits").
constexpr uint32_t kStoreMaxKeyBytes = 4u << 10;      // keys are "fp/123", "fpfull/sha256:<64 hex>"
constexpr uint32_t kStoreMaxValueBytes = 4u << 20;    // Gloo's address list: 136 B per rank
constexpr uint32_t kStoreMaxWaitKeys = 1u << 16;      // the fleet chief waits for one key per worker
constexpr uint32_t kStoreMaxWaitKeyBytes = 4u << 20;  // a WAIT's keys together
constexpr uint32_t kStoreMaxWhoBytes = 256;           // a claimant's self-description
constexpr uint32_t kStoreMaxProofBytes = 64;          // a claim's proof (an HMAC-SHA256 is 32)
constexpr uint32_t kStoreMaxMessageBytes = 4u << 10;  // a refusal's reason

// What one server gives all its peers together. The defaults suit a caller that does not
// know its job's size; ForTasks sizes the connections to the job.
struct StoreLimits {
  int max_connections = 1024;  // open at once; more are refused (closed at once)
  // Keys and values held, plus the requests being read (each byte counted as it arrives,
  // with 128 bytes of bookkeeping per key): a peer whose request would pass it is dropped.
  uint64_t max_held_bytes = 64u << 20;
  // A request must arrive whole within this of its first byte, and a new connection's
  // first request within this of the accept; a reply must leave within it too. Between
  // requests a connection may stay idle for ever (ranks keep theirs for the whole job).
  std::chrono::milliseconds io_timeout{std::chrono::seconds(10)};
  // Why a peer was refused or dropped, one line each (the first 64 refusals and the first
  // 64 drops, then at every power of two of either count). Called from the server's
  // threads; library code never prints.
  std::function<void(const std::string&)> log;

  // max_connections = 2 * tasks + 32: every task holds one connection; a restarted task
  // briefly holds two.
  static StoreLimits ForTasks(int tasks);
};

// Who may take part: the ranks a claim may name, and the job token, if any.
struct StoreAccess {
  int world_size = 0;  // claims of a rank >= world_size are refused; 0: any rank
  JobTokenPtr token;   // null: open (no proof asked)
};

// What a client claims when it connects. Without a rank it may only read, and only from
// an open store. Rank 0 is the chief's: the process that serves the store claims it with
// TcpStoreServer::ChiefClaim, whose key is the server's own; every other rank proves the
// job's token, when the job has one (required then, by both sides).
struct StoreClaim {
  StoreClaim() = default;
  explicit StoreClaim(int r, JobTokenPtr t = nullptr) : rank(r), token(std::move(t)) {}
  int rank = -1;
  JobTokenPtr token;
};

class StoreBudget;     // store_budget.h: the held bytes
struct StoreEntry;     // a stored value, counted until its last reader lets go
struct StoreRequest;   // store_request.h
enum class StoreGate;  // store_request.h

struct StoreStats {
  int connections = 0;      // open now
  uint64_t held_bytes = 0;  // counted against max_held_bytes now
  uint64_t peak_held_bytes = 0;
  uint64_t refused_peers = 0;   // connections closed at once: max_connections were open
  uint64_t dropped_peers = 0;   // disconnected for passing a limit, or talking before proving the token
  uint64_t refused_claims = 0;  // a rank out of range, claimed already, or a missing or wrong proof
  uint64_t denied_writes = 0;   // a SET of a key its connection does not own, or that exists
  // For tests, counts of what the server did rather than times: WAITs parked now, and
  // parked WAITs a SET looked at (only those filed under the key it stored).
  int parked_waits = 0;
  uint64_t woken_waits = 0;
};

class TcpStoreServer {
 public:
  // Listens on host:port (port 0 picks one; see port()).
  static Result<std::unique_ptr<TcpStoreServer>> Start(const std::string& host, int port, StoreLimits limits = {},
                                                       StoreAccess access = {});
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  int port() const { return port_; }
  // Rank 0's claim, for this process's own client: proven with a key only this server
  // and its process know (random, made at Start), so no other process can claim the
  // chief's rank and speak for it, with or without a job token.
  StoreClaim ChiefClaim() const { return StoreClaim(0, owner_); }
  StoreStats stats();
  // Every rank claimed twice so far, one line each ("rank 1 is claimed twice: by
  // 127.0.0.1:41234 (pid 12 on node-a), then by 127.0.0.1:41240 (pid 13 on node-a)"): the
  // first 64 (a job has a duplicate or an outsider, and the chief must not go on).
  std::vector<std::string> conflicts();

 private:
  struct Conn;        // one connection: its buffers, its request, its parked WAIT (tcp_store_loop.cc)
  struct Session;     // one connection's handshake: its nonce, its claimed rank
  struct Claim {      // who holds a rank
    std::string who;  // "127.0.0.1:41234 (pid 12 on node-a)"
  };
  enum class Log { kRefusedPeer, kDroppedPeer, kRefusedClaim, kDeniedWrite };
  using Clock = std::chrono::steady_clock;
  using Waiters = std::multimap<std::string, uint64_t>;  // a missing key -> the connections waiting for it

  TcpStoreServer(StoreLimits limits, StoreAccess access);
  // The event loop (tcp_store_loop.cc), on its one thread: accepts, reads what arrived,
  // answers every whole request, writes what the peers can take, ends what is late.
  void Loop();
  void AcceptReady();
  void Admit(int fd, const std::string& peer);
  void ReadReady(Conn& c);
  // Answers the whole requests buffered, one after another, until one parks (a WAIT) or
  // the replies must wait for the peer to read.
  void Advance(Conn& c);
  void BeginRequest(Conn& c);
  void Flush(Conn& c);
  void Expire(Clock::time_point now);
  void SetDeadline(Conn& c, int kind, std::optional<Clock::time_point> when);
  void Watch(Conn& c);
  StoreGate Gate(const Conn& c) const;
  void Drop(Conn& c, const std::string& why);
  void Close(Conn& c);
  // A WAIT: files it under the first key it still misses; true when none is missing.
  bool FileWait(Conn& c);
  // A parked WAIT's reply (found flags), queued; the connection reads on.
  void FinishWait(Conn& c);
  void WakeWaiters(const std::string& key);

  // Answers one request into the connection's reply buffer; false when the peer must go
  // (*why then says why, or is empty when it only closes after the reply).
  bool Answer(Conn& c, std::unique_ptr<StoreRequest> req, std::string* why);
  std::string Hello(Session& session, std::string* why);
  // The CLAIM's reply; false (with *why) when the connection must then close.
  bool GrantClaim(Session& session, StoreRequest& req, std::string* reply, std::string* why);
  // A SET's reply; empty when the peer must go (*why).
  std::string StoreValue(const Session& session, StoreRequest& req, std::string* why);
  void Note(const std::string& line, Log kind);

  StoreLimits limits_;
  StoreAccess access_;
  JobTokenPtr owner_;                    // rank 0's key
  std::unique_ptr<StoreBudget> budget_;  // outlives data_ and conns_: their bytes go back to it
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // an eventfd: the destructor's word to the loop
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread loop_thread_;
  // The loop's own, touched by no other thread: the data, the connections, the WAITs
  // parked on a missing key (a SET looks only at the waiters of its key: 10,000 workers
  // waiting on one "verdict" cost nothing while 10,000 fp/<rank> keys arrive), the
  // deadlines (the next to pass first), the connections with a reply to send.
  std::map<std::string, std::shared_ptr<const StoreEntry>> data_;
  std::map<uint64_t, std::unique_ptr<Conn>> conns_;  // by id: an fd number is reused, an id never
  uint64_t next_id_ = 1;
  Waiters waiters_;
  std::set<std::tuple<Clock::time_point, uint64_t, int>> deadlines_;  // when, connection, LateKind
  std::vector<uint64_t> ready_;                                       // a WAIT finished: reply, then read on
  std::vector<uint64_t> closed_;                                      // to be freed once the events in hand are handled
  std::optional<Clock::time_point> accept_paused_until_;              // out of descriptors: try again then
  std::atomic<int> open_{0};
  std::atomic<uint64_t> woken_waits_{0};
  std::atomic<int> parked_{0};
  std::mutex mu_;                     // guards claims_, conflicts_ and the counters, which other threads read
  std::map<uint32_t, Claim> claims_;  // rank -> its claimant, for good
  std::vector<std::string> conflicts_;
  uint64_t refused_ = 0, dropped_ = 0, refused_claims_ = 0, denied_writes_ = 0;
};

class TcpStoreClient {
 public:
  // Retries the connection until `timeout`: the chief may start after its workers. Then
  // claims claim.rank (when >= 0): kDenied when the store refuses (the rank is claimed
  // already: the message names both claimants; a wrong or missing token), when it does
  // not prove it holds our token, or when it asks for a token we do not have.
  static Result<std::unique_ptr<TcpStoreClient>> Connect(const std::string& host, int port,
                                                         std::chrono::milliseconds timeout,
                                                         const StoreClaim& claim = {});
  ~TcpStoreClient();
  TcpStoreClient(const TcpStoreClient&) = delete;
  TcpStoreClient& operator=(const TcpStoreClient&) = delete;

  // Each refuses a key or value over the protocol limits (kInvalidInput) before sending.
  // Stores key = value. kDenied when the store refuses: the key exists (keys are
  // write-once), or it is not this connection's rank's (store_keys.h).
  Status Set(const std::string& key, const std::string& value);
  // Stores key = value unless the key exists: true stored, false it was there already
  // (for content-addressed keys, which any rank may have written first).
  Result<bool> Add(const std::string& key, const std::string& value);
  // Set, then reads the key back: kIntegrity unless the store holds exactly `value`.
  Status Publish(const std::string& key, const std::string& value);
  Result<std::optional<std::string>> Get(const std::string& key);
  // Every key's value (nullopt where absent), the GETs pipelined: sent a window at a time
  // and their replies read back in order, so N keys cost N/window round trips, not N.
  Result<std::vector<std::optional<std::string>>> GetMany(const std::vector<std::string>& keys);
  Result<bool> Check(const std::string& key);
  // Waits until every key exists (one WAIT request; the server blocks). On timeout the
  // error (kNotFound) lists the missing keys; `missing` (if given) receives them so
  // callers can name tasks. A server that stops meanwhile is a kTransport error.
  Status Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout,
              std::vector<std::string>* missing = nullptr);

  // Bytes this client has written to / read from its connection (requests and replies).
  uint64_t bytes_sent() const { return bytes_sent_; }
  uint64_t bytes_received() const { return bytes_received_; }

 private:
  explicit TcpStoreClient(int fd, std::string where) : fd_(fd), where_(std::move(where)) {}
  // HELLO and CLAIM (the wire format above).
  Status Handshake(const StoreClaim& claim, std::chrono::milliseconds timeout);
  // A SET: true stored; false the key exists (*exists, if given, says who wrote it).
  Result<bool> Store(const std::string& key, const std::string& value, std::string* exists);
  Status Send(const std::string& bytes);
  // Reads exactly n bytes; fails after `deadline` when one is given (a silent server).
  Status Recv(void* out, size_t n, std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);
  Result<std::string> RecvString(uint32_t max_bytes = kStoreMaxValueBytes,
                                 std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

  int fd_;
  std::string where_;
  std::mutex mu_;  // one request at a time per connection
  std::atomic<uint64_t> bytes_sent_{0}, bytes_received_{0};
};

}  // namespace trainer
