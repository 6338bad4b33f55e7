#include "cluster/tcp_store.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace trainer {
namespace {

enum Op : uint8_t { kSet = 1, kGet = 2, kCheck = 3, kWait = 4 };

// Bounds on what a peer may ask for, so a garbled request cannot exhaust the server.
constexpr uint32_t kMaxValue = 64u << 20;  // a store value is an address, not a payload
constexpr uint32_t kMaxWaitKeys = 1u << 20;
// The listen backlog: a whole fleet connects at once when the chief starts (the kernel
// caps it at net.core.somaxconn); connections beyond it are retried by Connect.
constexpr int kBacklog = 4096;
// How long past a WAIT's own timeout a client waits for the reply before calling the
// server silent (a chief whose host vanished without closing the connection).
constexpr auto kWaitReplyGrace = std::chrono::seconds(10);

Error Transport(const std::string& msg) { return MakeError(ErrorKind::kTransport, msg); }

void PutU32(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Every client request starts with the op and the length-prefixed key.
std::string KeyRequest(Op op, const std::string& key) {
  std::string req(1, static_cast<char>(op));
  PutU32(&req, static_cast<uint32_t>(key.size()));
  req += key;
  return req;
}

uint32_t GetU32(const uint8_t* b) {
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
}

bool WriteAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool ReadAll(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

std::optional<StoreRequest> ReadStoreRequest(const std::function<bool(void* data, size_t n)>& read) {
  auto read_string = [&](std::string* out) {
    uint8_t len[4];
    if (!read(len, 4)) return false;
    uint32_t n = GetU32(len);
    if (n > kMaxValue) return false;
    out->resize(n);
    return n == 0 || read(out->data(), n);
  };
  StoreRequest req;
  if (!read(&req.op, 1)) return std::nullopt;
  if (req.op == kWait) {
    uint8_t word[4];
    if (!read(word, 4)) return std::nullopt;
    uint32_t count = GetU32(word);
    if (count > kMaxWaitKeys) return std::nullopt;
    req.keys.resize(count);
    for (auto& k : req.keys) {
      if (!read_string(&k)) return std::nullopt;
    }
    if (!read(word, 4)) return std::nullopt;
    req.timeout_ms = GetU32(word);
    return req;
  }
  if (req.op != kSet && req.op != kGet && req.op != kCheck) return std::nullopt;  // unknown op: drop the peer
  req.keys.resize(1);
  if (!read_string(&req.keys[0])) return std::nullopt;
  if (req.op == kSet && !read_string(&req.value)) return std::nullopt;
  return req;
}

namespace {

std::string Seconds(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%gs", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

struct AddrInfo {
  addrinfo* list = nullptr;
  ~AddrInfo() {
    if (list) freeaddrinfo(list);
  }
};

}  // namespace

Result<std::unique_ptr<TcpStoreServer>> TcpStoreServer::Start(const std::string& host, int port) {
  AddrInfo ai;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  std::string where = host + ":" + std::to_string(port);
  int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &ai.list);
  if (rc != 0) return Transport("store " + where + ": resolving: " + gai_strerror(rc));
  int fd = ::socket(ai.list->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Transport("store " + where + ": socket: " + std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd, ai.list->ai_addr, ai.list->ai_addrlen) != 0 || ::listen(fd, kBacklog) != 0) {
    int err = errno;
    ::close(fd);
    if (err == EADDRINUSE) {
      return Transport("store " + where + ": cannot listen: port " + std::to_string(port) + " on " + host +
                       " is in use (another process listens there)");
    }
    return Transport("store " + where + ": cannot listen: " + std::strerror(err));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  std::unique_ptr<TcpStoreServer> s(new TcpStoreServer());
  s->listen_fd_ = fd;
  s->port_ = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                         : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  TcpStoreServer* self = s.get();
  s->accept_thread_ = std::thread([self] { self->AcceptLoop(); });
  return s;
}

TcpStoreServer::~TcpStoreServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    for (auto& [key, cv] : waiters_) cv->notify_one();  // WAITs then close their connections
  }
  ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
  accept_thread_.join();
  ::close(listen_fd_);
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : conns_) ::shutdown(fd, SHUT_RDWR);  // wakes recv() in Serve
    threads.swap(conn_threads_);
  }
  for (auto& t : threads) t.join();
}

void TcpStoreServer::AcceptLoop() {
  while (!stop_) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // shut down
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) {
      ::close(fd);
      return;
    }
    conns_.push_back(fd);
    conn_threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

std::string TcpStoreServer::AwaitKeys(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (stop_) return "";
    auto absent = std::find_if(keys.begin(), keys.end(), [&](const std::string& k) { return data_.count(k) == 0; });
    if (absent == keys.end()) break;
    auto filed = waiters_.emplace(*absent, &cv);
    bool timed_out = cv.wait_until(lock, deadline) == std::cv_status::timeout;
    waiters_.erase(filed);
    if (timed_out) break;
  }
  if (stop_) return "";
  std::string reply;
  for (const auto& k : keys) reply.push_back(data_.count(k) != 0 ? 1 : 0);
  return reply;
}

void TcpStoreServer::Serve(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  for (;;) {
    auto req = ReadStoreRequest([fd](void* data, size_t n) { return ReadAll(fd, data, n); });
    if (!req) break;
    std::string reply;
    if (req->op == kWait) {
      reply = AwaitKeys(req->keys, std::chrono::milliseconds(req->timeout_ms));
      if (reply.size() != req->keys.size()) break;  // stopping: close instead of replying
    } else if (req->op == kSet) {
      std::lock_guard<std::mutex> lock(mu_);
      const std::string& key = req->keys[0];
      data_[key] = std::move(req->value);
      auto [first, last] = waiters_.equal_range(key);
      for (auto it = first; it != last; ++it) it->second->notify_one();
      reply.push_back(0);
    } else {  // GET, CHECK
      std::lock_guard<std::mutex> lock(mu_);
      auto it = data_.find(req->keys[0]);
      reply.push_back(it != data_.end() ? 1 : 0);
      if (req->op == kGet && it != data_.end()) {
        PutU32(&reply, static_cast<uint32_t>(it->second.size()));
        reply += it->second;
      }
    }
    if (!WriteAll(fd, reply.data(), reply.size())) break;
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& c : conns_) {
    if (c == fd) c = -1;
  }
  ::close(fd);
}

Result<std::unique_ptr<TcpStoreClient>> TcpStoreClient::Connect(const std::string& host, int port,
                                                                std::chrono::milliseconds timeout) {
  std::string where = host + ":" + std::to_string(port);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last = "no attempt";
  for (;;) {
    AddrInfo ai;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &ai.list);
    if (rc != 0) {
      last = gai_strerror(rc);
    } else {
      int fd = ::socket(ai.list->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd >= 0 && ::connect(fd, ai.list->ai_addr, ai.list->ai_addrlen) == 0) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        return std::unique_ptr<TcpStoreClient>(new TcpStoreClient(fd, where));
      }
      last = std::strerror(errno);
      if (fd >= 0) ::close(fd);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Transport("cannot reach the rendezvous store at " + where + " (the chief serves it) within " +
                       Seconds(timeout) + ": " + last);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

TcpStoreClient::~TcpStoreClient() { ::close(fd_); }

Status TcpStoreClient::Send(const std::string& bytes) {
  if (!WriteAll(fd_, bytes.data(), bytes.size())) return Transport("store " + where_ + ": connection lost");
  bytes_sent_ += bytes.size();
  return Status::Ok();
}

Status TcpStoreClient::Recv(void* out, size_t n, std::optional<std::chrono::steady_clock::time_point> deadline) {
  if (deadline) {
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
      pollfd p{fd_, POLLIN, 0};
      int rc = ::poll(&p, 1, static_cast<int>(std::clamp<int64_t>(left.count(), 0, INT32_MAX)));
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0) return Transport("store " + where_ + ": the server did not reply in time");
      break;  // readable, closed or failed: recv tells which
    }
  }
  if (!ReadAll(fd_, out, n)) return Transport("store " + where_ + ": connection lost");
  bytes_received_ += n;
  return Status::Ok();
}

Result<std::string> TcpStoreClient::RecvString() {
  uint8_t len[4];
  TRAINER_TRY(Recv(len, 4));
  uint32_t n = GetU32(len);
  if (n > kMaxValue) return Transport("store " + where_ + ": a reply of " + std::to_string(n) + " bytes");
  std::string value(n, '\0');
  if (n > 0) TRAINER_TRY(Recv(value.data(), n));
  return value;
}

Status TcpStoreClient::Set(const std::string& key, const std::string& value) {
  std::string req = KeyRequest(kSet, key);
  PutU32(&req, static_cast<uint32_t>(value.size()));
  req += value;
  std::lock_guard<std::mutex> lock(mu_);
  TRAINER_TRY(Send(req));
  uint8_t ack;
  return Recv(&ack, 1);
}

Result<std::optional<std::string>> TcpStoreClient::Get(const std::string& key) {
  std::string req = KeyRequest(kGet, key);
  std::lock_guard<std::mutex> lock(mu_);
  TRAINER_TRY(Send(req));
  uint8_t found;
  TRAINER_TRY(Recv(&found, 1));
  if (!found) return std::optional<std::string>();
  auto value = RecvString();
  if (!value.ok()) return value.error();
  return std::optional<std::string>(std::move(*value));
}

Result<bool> TcpStoreClient::Check(const std::string& key) {
  std::string req = KeyRequest(kCheck, key);
  std::lock_guard<std::mutex> lock(mu_);
  TRAINER_TRY(Send(req));
  uint8_t found;
  TRAINER_TRY(Recv(&found, 1));
  return found != 0;
}

Status TcpStoreClient::Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout,
                            std::vector<std::string>* missing) {
  if (keys.empty()) return Status::Ok();
  if (keys.size() > kMaxWaitKeys) {
    return MakeError(ErrorKind::kInvalidInput, "store: waiting for " + std::to_string(keys.size()) + " keys");
  }
  auto ms = std::clamp<int64_t>(timeout.count(), 0, UINT32_MAX);
  std::string req(1, static_cast<char>(kWait));
  PutU32(&req, static_cast<uint32_t>(keys.size()));
  for (const auto& k : keys) {
    PutU32(&req, static_cast<uint32_t>(k.size()));
    req += k;
  }
  PutU32(&req, static_cast<uint32_t>(ms));
  std::string found(keys.size(), '\0');
  {
    std::lock_guard<std::mutex> lock(mu_);
    TRAINER_TRY(Send(req));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms) + kWaitReplyGrace;
    TRAINER_TRY(Recv(found.data(), found.size(), deadline));
  }
  std::vector<std::string> absent;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!found[i]) absent.push_back(keys[i]);
  }
  if (absent.empty()) return Status::Ok();
  if (missing) *missing = absent;
  std::string list;
  for (const auto& k : absent) list += (list.empty() ? "" : ", ") + k;
  return MakeError(ErrorKind::kNotFound,
                   "store " + where_ + ": timed out after " + Seconds(timeout) + " waiting for " + list);
}

}  // namespace trainer
