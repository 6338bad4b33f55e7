// The store's server: what it answers to each request, from one map. Writes are admitted
// per StoreAccess and store_keys.h: a connection writes only as the rank it claimed. The
// connections themselves (one thread, epoll; reading under StoreLimits) are
// tcp_store_loop.cc's. Nothing a peer declares is allocated before its bytes arrive, and
// every byte held for peers is counted in one budget.
#include <netdb.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "cluster/store_auth.h"
#include "cluster/store_budget.h"
#include "cluster/store_conn.h"
#include "cluster/store_keys.h"
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
// Conflicting claims kept for the chief (TcpStoreServer::conflicts).
constexpr size_t kMaxConflicts = 64;
// Keys quoted in messages: peers choose them.
constexpr size_t kQuotedKeyBytes = 80;

Error Transport(const std::string& msg) { return MakeError(ErrorKind::kTransport, msg); }

struct AddrInfo {
  addrinfo* list = nullptr;
  ~AddrInfo() {
    if (list) freeaddrinfo(list);
  }
};

std::string WithLength(uint8_t status, const std::string& text) {
  std::string reply(1, static_cast<char>(status));
  sw::PutU32(&reply, static_cast<uint32_t>(text.size()));
  return reply + text;
}

}  // namespace

StoreLimits StoreLimits::ForTasks(int tasks) {
  StoreLimits l;
  l.max_connections = 2 * std::max(tasks, 1) + 32;
  return l;
}

Result<std::unique_ptr<TcpStoreServer>> TcpStoreServer::Start(const std::string& host, int port, StoreLimits limits,
                                                              StoreAccess access) {
  AddrInfo ai;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  std::string where = host + ":" + std::to_string(port);
  int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &ai.list);
  if (rc != 0) return Transport("store " + where + ": resolving: " + gai_strerror(rc));
  int fd = ::socket(ai.list->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
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
  std::unique_ptr<TcpStoreServer> s(new TcpStoreServer(std::move(limits), std::move(access)));
  store_auth::Nonce key;
  if (!store_auth::FreshNonce(&key)) {
    ::close(fd);
    return MakeError(ErrorKind::kInternal, "store " + where + ": OpenSSL's random generator failed");
  }
  auto owner = JobToken::FromSecret(std::string(key.begin(), key.end()), "the chief's own key");
  if (!owner.ok()) {
    ::close(fd);
    return owner.error();
  }
  s->owner_ = *owner;
  s->listen_fd_ = fd;
  s->port_ = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                         : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  s->epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  s->wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event listen_ev{EPOLLIN, {.u64 = kListenId}}, wake_ev{EPOLLIN, {.u64 = kWakeId}};
  if (s->epoll_fd_ < 0 || s->wake_fd_ < 0 || ::epoll_ctl(s->epoll_fd_, EPOLL_CTL_ADD, fd, &listen_ev) != 0 ||
      ::epoll_ctl(s->epoll_fd_, EPOLL_CTL_ADD, s->wake_fd_, &wake_ev) != 0) {
    return Transport("store " + where + ": epoll: " + std::strerror(errno));  // the destructor closes the fds
  }
  TcpStoreServer* self = s.get();
  s->loop_thread_ = std::thread([self] { self->Loop(); });
  return s;
}

TcpStoreServer::TcpStoreServer(StoreLimits limits, StoreAccess access)
    : limits_(std::move(limits)),
      access_(std::move(access)),
      budget_(std::make_unique<StoreBudget>(limits_.max_held_bytes)) {}

// The loop closes every connection as it ends, WAITs unanswered.
TcpStoreServer::~TcpStoreServer() {
  stop_ = true;
  if (loop_thread_.joinable()) {
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof(one));
    loop_thread_.join();
  }
  for (int fd : {listen_fd_, epoll_fd_, wake_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

StoreStats TcpStoreServer::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  StoreStats s;
  s.connections = open_;
  s.held_bytes = budget_->used();
  s.peak_held_bytes = budget_->peak();
  s.refused_peers = refused_;
  s.dropped_peers = dropped_;
  s.refused_claims = refused_claims_;
  s.denied_writes = denied_writes_;
  s.woken_waits = woken_waits_;
  s.parked_waits = parked_;
  return s;
}

std::vector<std::string> TcpStoreServer::conflicts() {
  std::lock_guard<std::mutex> lock(mu_);
  return conflicts_;
}

// Each kind is counted apart, so a flood of connections over the cap does not silence the
// reasons other peers were dropped, or their claims refused, for.
void TcpStoreServer::Note(const std::string& line, Log kind) {
  uint64_t* counter = &refused_;
  const char* what = " refused";
  if (kind == Log::kDroppedPeer) counter = &dropped_, what = " dropped";
  if (kind == Log::kRefusedClaim) counter = &refused_claims_, what = " claims refused";
  if (kind == Log::kDeniedWrite) counter = &denied_writes_, what = " writes denied";
  uint64_t n;
  {
    std::lock_guard<std::mutex> lock(mu_);
    n = ++*counter;
  }
  if (!limits_.log) return;
  if (n <= kLogFirst) {
    limits_.log("store: " + line);
  } else if ((n & (n - 1)) == 0) {
    limits_.log("store: " + line + " (" + std::to_string(n) + what + " so far; not every one is logged)");
  }
}

std::string TcpStoreServer::Hello(Session& session, std::string* why) {
  if (session.nonce) {
    *why = "sent HELLO twice";
    return "";
  }
  store_auth::Nonce nonce;
  if (!store_auth::FreshNonce(&nonce)) {
    *why = "no nonce for it: OpenSSL's random generator failed";
    return "";
  }
  session.nonce = nonce;
  std::string reply(1, static_cast<char>(access_.token ? sw::kTokenRequired : sw::kOpen));
  reply.append(reinterpret_cast<const char*>(nonce.data()), nonce.size());
  return reply;
}

// The checks run in this order so that a peer without the token learns nothing about who
// holds which rank: the range, the proof, then the claims. Rank 0 is proven with the
// server's own key (ChiefClaim), every other rank with the job's token, if any.
bool TcpStoreServer::GrantClaim(Session& session, StoreRequest& req, std::string* reply, std::string* why) {
  if (!session.nonce || session.rank >= 0) {
    *why = session.rank >= 0 ? "claimed a rank twice on one connection" : "sent CLAIM before HELLO";
    return false;
  }
  store_auth::Nonce client;
  std::copy(req.nonce.begin(), req.nonce.end(), client.begin());
  const std::string rank = "rank " + std::to_string(req.rank);
  const std::string who = session.peer + " (" + sw::Printable(req.who, kStoreMaxWhoBytes) + ")";
  const JobToken* key = req.rank == 0 ? owner_.get() : access_.token.get();
  std::string refusal;
  if (req.rank >= kStoreMaxRank || (access_.world_size > 0 && req.rank >= static_cast<uint32_t>(access_.world_size))) {
    refusal = rank + " is not one of the job's " +
              (access_.world_size > 0 ? std::to_string(access_.world_size) : std::to_string(kStoreMaxRank)) + " ranks";
  } else if (key && !key->Verify(store_auth::ClaimMessage(*session.nonce, client, req.rank, req.who),
                                 reinterpret_cast<const uint8_t*>(req.proof.data()), req.proof.size())) {
    refusal = req.rank == 0       ? "rank 0 is the chief's, claimed only by the process that serves the store"
              : req.proof.empty() ? "no proof of the job token, which this store requires"
                                  : "a wrong proof of the job token (the claimant holds another token)";
  } else if (!req.Charge(kStoreEntryOverhead + who.size())) {
    *why = "its claim would take the store past " + std::to_string(budget_->limit()) + " bytes held";
    return false;
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, fresh] = claims_.try_emplace(req.rank, Claim{who});
    if (fresh) {
      req.charged = 0;  // kept for the life of the store
    } else {
      refusal = rank + " is claimed twice: first by " + it->second.who + ", then by " + who;
      if (conflicts_.size() < kMaxConflicts) conflicts_.push_back(refusal);
    }
  }
  if (!refusal.empty()) {
    Note("refused the claim of " + rank + " by " + who + ": " + refusal, Log::kRefusedClaim);
    *reply = WithLength(sw::kRefused, refusal);
    return false;
  }
  session.rank = req.rank;
  session.who = who;
  std::string proof;
  if (key) {
    const Mac mac = key->Sign(store_auth::ChiefMessage(*session.nonce, client, req.rank));
    proof.assign(reinterpret_cast<const char*>(mac.data()), mac.size());
  }
  *reply = WithLength(sw::kGranted, proof);
  return true;
}

// A SET's reply: stored, or why not. Empty when the peer must go (*why).
std::string TcpStoreServer::StoreValue(const Session& session, StoreRequest& req, std::string* why) {
  const std::string& key = req.keys[0];
  const KeyOwner owner = OwnerOf(key);
  const std::string quoted = sw::Printable(key, kQuotedKeyBytes);
  std::string denial;
  if (session.rank < 0) {
    denial = quoted + " is " + DescribeOwner(owner) + "'s; this connection claimed no rank";
  } else if (owner.kind == KeyOwner::kRank && owner.rank != session.rank) {
    denial = quoted + " is " + DescribeOwner(owner) + "'s, not rank " + std::to_string(session.rank) + "'s";
  }
  if (!denial.empty()) {
    Note("denied a write by " + (session.who.empty() ? session.peer : session.who) + ": " + denial, Log::kDeniedWrite);
    return WithLength(sw::kDenied, denial);
  }
  if (!req.Charge(kStoreEntryOverhead)) {
    *why = "its request would take the store past " + std::to_string(budget_->limit()) + " bytes held";
    return "";
  }
  const uint64_t charged = std::exchange(req.charged, 0);
  auto entry = std::make_shared<const StoreEntry>(std::move(req.value), static_cast<uint32_t>(session.rank),
                                                  budget_.get(), charged);
  uint32_t writer = 0;
  {
    auto [it, fresh] = data_.try_emplace(key, entry);
    if (fresh) {
      WakeWaiters(key);
      return std::string(1, static_cast<char>(sw::kStored));
    }
    writer = it->second->writer;
  }
  const std::string exists =
      quoted + " exists already (rank " + std::to_string(writer) + " wrote it); keys are write-once";
  // Two ranks racing to store the same content-addressed value is how those keys work.
  if (owner.kind != KeyOwner::kShared) Note("denied a write by " + session.who + ": " + exists, Log::kDeniedWrite);
  return WithLength(sw::kExists, exists);
}

bool TcpStoreServer::Answer(Conn& c, std::unique_ptr<StoreRequest> req, std::string* why) {
  std::string reply;
  std::shared_ptr<const StoreEntry> value;  // a GET's, written after the reply's header
  switch (req->op) {
    case sw::kHello:
      reply = Hello(c.session, why);
      break;
    case sw::kClaim:
      c.close_after_reply = !GrantClaim(c.session, *req, &reply, why);
      break;
    case sw::kSet:
      reply = StoreValue(c.session, *req, why);
      break;
    case sw::kWait:
      c.wait = std::move(req);
      c.wait_next = 0;
      if (FileWait(c) || c.wait->wait_ms == 0) {
        FinishWait(c);
      } else {
        SetDeadline(c, kLateWait, Clock::now() + std::chrono::milliseconds(c.wait->wait_ms));
        c.parked = true;
        ++parked_;
      }
      return true;
    default: {  // GET, CHECK
      auto it = data_.find(req->keys[0]);
      if (it != data_.end()) value = it->second;
      reply.push_back(value ? 1 : 0);
      if (req->op == sw::kGet && value) sw::PutU32(&reply, static_cast<uint32_t>(value->value.size()));
      if (req->op != sw::kGet) value.reset();
    }
  }
  if (reply.empty()) return false;  // *why says why
  c.Reply(reply, std::move(value));
  return true;
}

}  // namespace trainer
