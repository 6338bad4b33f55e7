// A small key-value rendezvous store over TCP, served by the chief (the shape of
// PyTorch's TCPStore). Workers need only the chief's address, which TF_CONFIG already
// gives; no shared folder (Gloo's FileStore) and no extra service (its RedisStore).
// Values are write-once by convention; there is no delete and no auth: it lives for one
// job on the job's private network.
//
// Wire format, all integers little-endian u32:
//   request  = op:u8 key_len key [value_len value]      op 1 SET, 2 GET, 3 CHECK
//            | op:u8 count (key_len key){count} timeout_ms   op 4 WAIT
//   reply    = SET: u8 0   GET: u8 found [len bytes]   CHECK: u8 found
//              WAIT: u8 found per key, sent once every key exists or timeout_ms passed
// WAIT blocks on the server (a thread per connection sleeps on a condition variable that
// every SET and the server's shutdown wake), so N waiting workers cost no polling. A
// server shutting down closes the connection instead of replying.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/result.h"

namespace trainer {

// One request as the server reads it off a connection: apart from the socket so that
// the parser is a unit test and a fuzz target (tests/fuzz), since any peer that reaches
// the chief's port can send these bytes.
struct StoreRequest {
  uint8_t op = 0;                 // 1 SET, 2 GET, 3 CHECK, 4 WAIT
  std::vector<std::string> keys;  // one; WAIT: count of them
  std::string value;              // SET
  uint32_t timeout_ms = 0;        // WAIT
};
// Reads one request through `read`, which fills exactly n bytes or returns false (the
// peer is gone). nullopt when the peer is gone, the op is unknown or a length is beyond
// the server's bounds: the server then drops the connection.
std::optional<StoreRequest> ReadStoreRequest(const std::function<bool(void* data, size_t n)>& read);

class TcpStoreServer {
 public:
  // Listens on host:port (port 0 picks one; see port()).
  static Result<std::unique_ptr<TcpStoreServer>> Start(const std::string& host, int port);
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  int port() const { return port_; }

 private:
  TcpStoreServer() = default;
  void AcceptLoop();
  void Serve(int fd);
  // Blocks until every key exists, the deadline passes or the server stops; the reply.
  std::string AwaitKeys(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread accept_thread_;
  std::mutex mu_;  // guards data_, conns_, conn_threads_
  // WAITs sleep on their own condition variable, filed under the first key they still
  // miss, so a SET wakes only the waiters of that key (10,000 workers waiting on one
  // "verdict" cost nothing while 10,000 fp/<rank> keys arrive). Stop wakes them all.
  std::multimap<std::string, std::condition_variable*> waiters_;
  std::map<std::string, std::string> data_;
  std::vector<int> conns_;
  std::vector<std::thread> conn_threads_;
};

class TcpStoreClient {
 public:
  // Retries the connection until `timeout`: the chief may start after its workers.
  static Result<std::unique_ptr<TcpStoreClient>> Connect(const std::string& host, int port,
                                                         std::chrono::milliseconds timeout);
  ~TcpStoreClient();
  TcpStoreClient(const TcpStoreClient&) = delete;
  TcpStoreClient& operator=(const TcpStoreClient&) = delete;

  Status Set(const std::string& key, const std::string& value);
  Result<std::optional<std::string>> Get(const std::string& key);
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
  Status Send(const std::string& bytes);
  // Reads exactly n bytes; fails after `deadline` when one is given (a silent server).
  Status Recv(void* out, size_t n,
              std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);
  Result<std::string> RecvString();

  int fd_;
  std::string where_;
  std::mutex mu_;  // one request at a time per connection
  std::atomic<uint64_t> bytes_sent_{0}, bytes_received_{0};
};

}  // namespace trainer
