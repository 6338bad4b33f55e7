// The store's server: one thread per connection reads requests under StoreLimits and
// answers them from one map. Nothing a peer declares is allocated before its bytes arrive,
// and every byte held for peers is counted in one budget.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "cluster/store_budget.h"
#include "cluster/store_request.h"
#include "cluster/store_wire.h"
#include "cluster/tcp_store.h"

namespace trainer {
namespace {

namespace sw = store_wire;

// The listen backlog: a whole fleet connects at once when the chief starts (the kernel
// caps it at net.core.somaxconn); connections beyond it are retried by Connect.
constexpr int kBacklog = 4096;
// Refusals, and drops, logged one by one; after that, at every power of two of the count.
constexpr uint64_t kLogFirst = 64;

Error Transport(const std::string& msg) { return MakeError(ErrorKind::kTransport, msg); }

struct AddrInfo {
  addrinfo* list = nullptr;
  ~AddrInfo() {
    if (list) freeaddrinfo(list);
  }
};

std::string PeerName(const sockaddr_storage& ss, socklen_t len) {
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&ss), len, host, sizeof(host), serv, sizeof(serv),
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "(unknown address)";
  }
  const bool v6 = ss.ss_family == AF_INET6;
  std::string name = v6 ? "[" : "";
  name.append(host).append(v6 ? "]:" : ":").append(serv);
  return name;
}

}  // namespace

StoreLimits StoreLimits::ForTasks(int tasks) {
  StoreLimits l;
  l.max_connections = 2 * std::max(tasks, 1) + 32;
  return l;
}

Result<std::unique_ptr<TcpStoreServer>> TcpStoreServer::Start(const std::string& host, int port, StoreLimits limits) {
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
  std::unique_ptr<TcpStoreServer> s(new TcpStoreServer(std::move(limits)));
  s->listen_fd_ = fd;
  s->port_ = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                         : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  TcpStoreServer* self = s.get();
  s->accept_thread_ = std::thread([self] { self->AcceptLoop(); });
  return s;
}

TcpStoreServer::TcpStoreServer(StoreLimits limits)
    : limits_(std::move(limits)), budget_(std::make_unique<StoreBudget>(limits_.max_held_bytes)) {}

TcpStoreServer::~TcpStoreServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    for (auto& [key, cv] : waiters_) cv->notify_one();  // WAITs then close their connections
  }
  ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
  accept_thread_.join();
  ::close(listen_fd_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Conn& c : conns_) {
      if (c.fd >= 0) ::shutdown(c.fd, SHUT_RDWR);  // wakes the reads in Serve
    }
  }
  // Only Admit (on the accept thread, joined above) adds or erases connections.
  for (Conn& c : conns_) c.thread.join();
}

StoreStats TcpStoreServer::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  StoreStats s;
  s.connections = static_cast<int>(conns_.size() - finished_.size());
  s.held_bytes = budget_->used();
  s.peak_held_bytes = budget_->peak();
  s.refused_peers = refused_;
  s.dropped_peers = dropped_;
  return s;
}

// Refusals and drops are counted apart, so a flood of connections over the cap does not
// silence the reasons other peers were dropped for.
void TcpStoreServer::Drop(const std::string& line, bool refused) {
  uint64_t n;
  {
    std::lock_guard<std::mutex> lock(mu_);
    n = refused ? ++refused_ : ++dropped_;
  }
  if (!limits_.log) return;
  if (n <= kLogFirst) {
    limits_.log("store: " + line);
  } else if ((n & (n - 1)) == 0) {
    limits_.log("store: " + line + " (" + std::to_string(n) + (refused ? " refused" : " dropped") +
                " so far; not every one is logged)");
  }
}

void TcpStoreServer::AcceptLoop() {
  while (!stop_) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC);
    if (fd >= 0) {
      Admit(fd, PeerName(ss, len));
      continue;
    }
    if (stop_ || errno == EINVAL || errno == EBADF) return;  // shut down
    // Out of descriptors or memory for a moment (EMFILE, ENOBUFS): the connections we
    // have keep being served, and we try again shortly.
    if (errno != EINTR && errno != ECONNABORTED) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void TcpStoreServer::Admit(int fd, const std::string& peer) {
  std::vector<std::thread> exited;
  bool refused = false;
  size_t open = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it : finished_) {
      exited.push_back(std::move(it->thread));
      conns_.erase(it);
    }
    finished_.clear();
    open = conns_.size();
    if (stop_ || open >= static_cast<size_t>(limits_.max_connections)) {
      ::close(fd);
      refused = !stop_;
    } else {
      auto c = conns_.insert(conns_.end(), Conn{fd, peer, {}});
      c->thread = std::thread([this, c] { Serve(c); });
    }
  }
  for (auto& t : exited) t.join();
  if (refused) {
    Drop("refused peer " + peer + ": " + std::to_string(open) + " connections open, the most it serves", true);
  }
}

void TcpStoreServer::Serve(std::list<Conn>::iterator c) {
  const int fd = c->fd;
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  const auto ms = limits_.io_timeout.count();
  timeval send_timeout{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>(ms % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout));
  sw::Deadline first = sw::Clock::now() + limits_.io_timeout;
  std::string why;
  for (;;) {
    StoreRequest req(*budget_);
    if (!ReadStoreRequest(fd, limits_, first, &req, &why)) break;
    first.reset();
    if (!Answer(fd, req, &why)) break;
  }
  if (!why.empty() && !stop_) Drop("dropped peer " + c->peer + ": " + why, false);
  std::lock_guard<std::mutex> lock(mu_);
  ::close(fd);
  c->fd = -1;
  finished_.push_back(c);
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

bool TcpStoreServer::Answer(int fd, StoreRequest& req, std::string* why) {
  std::string reply;
  std::shared_ptr<const StoreEntry> value;  // a GET's, written after the reply's header
  if (req.op == store_wire::kSet) {
    if (!req.Charge(kStoreEntryOverhead)) {
      *why = "its request would take the store past " + std::to_string(budget_->limit()) + " bytes held";
      return false;
    }
    const uint64_t charged = std::exchange(req.charged, 0);
    auto entry = std::make_shared<const StoreEntry>(std::move(req.value), budget_.get(), charged);
    std::lock_guard<std::mutex> lock(mu_);
    data_[req.keys[0]] = std::move(entry);
    auto [first, last] = waiters_.equal_range(req.keys[0]);
    for (auto it = first; it != last; ++it) it->second->notify_one();
    reply.push_back(0);
  } else if (req.op == store_wire::kWait) {
    reply = AwaitKeys(req.keys, std::chrono::milliseconds(req.wait_ms));
    if (reply.size() != req.keys.size()) return false;  // stopping: close instead of replying
  } else {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = data_.find(req.keys[0]);
      if (it != data_.end()) value = it->second;
    }
    reply.push_back(value ? 1 : 0);
    if (req.op == store_wire::kGet && value) store_wire::PutU32(&reply, static_cast<uint32_t>(value->value.size()));
    if (req.op != store_wire::kGet) value.reset();
  }
  bool sent = store_wire::WriteAll(fd, reply.data(), reply.size()) &&
              (!value || store_wire::WriteAll(fd, value->value.data(), value->value.size()));
  if (!sent && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    *why = "stopped reading its replies for " + store_wire::Seconds(limits_.io_timeout);
  }
  return sent;
}

}  // namespace trainer
