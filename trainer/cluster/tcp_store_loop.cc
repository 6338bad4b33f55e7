// The store's server, its connections: one thread waits on epoll for every socket, reads
// what arrived into the connection's buffer (each byte counted in the budget), answers
// every whole request in it (tcp_store_server.cc), and writes the replies as fast as the
// peer takes them. A WAIT parks its connection under the first key it misses; a SET of
// that key looks at it again. Deadlines (StoreLimits::io_timeout, a WAIT's timeout) sit in
// one ordered set, the next to pass first.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "cluster/store_conn.h"
#include "cluster/store_wire.h"

namespace trainer {
namespace {

namespace sw = store_wire;
using Clock = std::chrono::steady_clock;

// Per wake-up of the loop: events taken, connections accepted, bytes read from one peer
// (so one busy peer does not hold up the others).
constexpr int kEvents = 512;
constexpr int kAcceptBurst = 256;
constexpr size_t kReadBurst = 256u << 10;
constexpr size_t kChunk = 64u << 10;
// Out of descriptors (EMFILE): the connections we have keep being served; accept again after this.
constexpr auto kAcceptPause = std::chrono::milliseconds(10);
// A buffer emptied with more than this capacity gives it back.
constexpr size_t kKeptCapacity = 64u << 10;

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

int MsUntil(std::optional<Clock::time_point> when) {
  if (!when) return -1;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(*when - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(ms, 0, INT32_MAX));
}

}  // namespace

void TcpStoreServer::Loop() {
  epoll_event events[kEvents];
  while (!stop_) {
    std::optional<Clock::time_point> next;
    if (!deadlines_.empty()) next = std::get<0>(*deadlines_.begin());
    if (accept_paused_until_ && (!next || *accept_paused_until_ < *next)) next = accept_paused_until_;
    const int n = ::epoll_wait(epoll_fd_, events, kEvents, ready_.empty() ? MsUntil(next) : 0);
    for (int i = 0; i < n && !stop_; ++i) {
      const uint64_t id = events[i].data.u64;
      if (id == kWakeId) continue;  // stop_ says why
      if (id == kListenId) {
        AcceptReady();
        continue;
      }
      auto it = conns_.find(id);
      if (it == conns_.end() || it->second->closed) continue;  // closed by an earlier event
      Conn& c = *it->second;
      if (events[i].events & (EPOLLERR | EPOLLHUP)) {
        Close(c);  // reset, or gone both ways: nobody to answer
      } else if (events[i].events & EPOLLOUT) {
        Flush(c);
        if (!c.closed && !c.blocked) Advance(c);
      } else if (events[i].events & EPOLLIN) {
        ReadReady(c);
      }
    }
    // WAITs a SET (or their timeout) finished: their replies, then what they sent next.
    for (size_t i = 0; i < ready_.size() && !stop_; ++i) {
      auto it = conns_.find(ready_[i]);
      if (it != conns_.end() && !it->second->closed) Advance(*it->second);
    }
    ready_.clear();
    Expire(Clock::now());
    if (accept_paused_until_ && Clock::now() >= *accept_paused_until_) {
      accept_paused_until_.reset();
      epoll_event ev{EPOLLIN, {.u64 = kListenId}};
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
    }
    for (uint64_t id : closed_) conns_.erase(id);
    closed_.clear();
  }
  // Stopping: every connection closes, WAITs unanswered (tcp_store.h).
  for (auto& [id, c] : conns_) {
    if (!c->closed) ::close(c->fd);
  }
  conns_.clear();
  waiters_.clear();
  open_ = 0;
  parked_ = 0;
}

void TcpStoreServer::AcceptReady() {
  for (int i = 0; i < kAcceptBurst; ++i) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      Admit(fd, PeerName(ss, len));
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      // Out of descriptors or memory for a moment (EMFILE, ENOBUFS): the connections we
      // have keep being served, and we try again shortly.
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
      accept_paused_until_ = Clock::now() + kAcceptPause;
    }
    return;
  }
}

void TcpStoreServer::Admit(int fd, const std::string& peer) {
  const int open = open_;
  if (open >= limits_.max_connections) {
    ::close(fd);
    Note("refused peer " + peer + ": " + std::to_string(open) + " connections open, the most it serves",
         Log::kRefusedPeer);
    return;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  const uint64_t id = next_id_++;
  auto conn = std::make_unique<Conn>(id, fd, peer, *budget_);
  Conn& c = *conn;
  conns_.emplace(id, std::move(conn));
  ++open_;
  c.events = EPOLLIN;
  epoll_event ev{c.events, {.u64 = id}};
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    Close(c);
    return;
  }
  SetDeadline(c, kLateFirst, Clock::now() + limits_.io_timeout);
}

void TcpStoreServer::ReadReady(Conn& c) {
  char chunk[kChunk];
  for (size_t got = 0; got < kReadBurst;) {
    ssize_t r = ::recv(c.fd, chunk, sizeof(chunk), 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (r <= 0) {
      Close(c);  // the peer closed (or failed): it is gone, which is no reason to log
      return;
    }
    c.in.append(chunk, static_cast<size_t>(r));
    // What it declares is checked before its bytes are counted as held: a peer that
    // declares too much is dropped having cost nothing but this read.
    BeginRequest(c);
    std::string why;
    if (c.parser.Parse(c.in.data() + c.in_pos, c.in.size() - c.in_pos, Gate(c), c.req.get(), &why, false) ==
        StoreRequestParser::Step::kBad) {
      return Drop(c, why);
    }
    if (!budget_->Take(static_cast<uint64_t>(r))) {
      return Drop(c, "its request would take the store past " + std::to_string(budget_->limit()) + " bytes held");
    }
    c.in_charged += static_cast<uint64_t>(r);
    got += static_cast<size_t>(r);
    if (static_cast<size_t>(r) < sizeof(chunk)) break;
  }
  Advance(c);
}

// A request's first byte is in: the rest must come within the I/O timeout.
void TcpStoreServer::BeginRequest(Conn& c) {
  if (!c.req) c.req = std::make_unique<StoreRequest>(*budget_);
  if (c.parser.started()) return;
  SetDeadline(c, kLateFirst, std::nullopt);
  SetDeadline(c, kLateRequest, Clock::now() + limits_.io_timeout);
}

void TcpStoreServer::Advance(Conn& c) {
  while (!c.closed && !c.wait && !c.blocked && !c.must_flush() && c.in_pos < c.in.size()) {
    BeginRequest(c);
    std::string why;
    const auto step = c.parser.Parse(c.in.data() + c.in_pos, c.in.size() - c.in_pos, Gate(c), c.req.get(), &why);
    if (step == StoreRequestParser::Step::kBad) return Drop(c, why);
    if (step == StoreRequestParser::Step::kMore) break;
    // Whole: its bytes leave the buffer's count for the request's, until it is answered.
    const size_t taken = c.parser.size_taken();
    c.req->charged += taken;
    c.in_charged -= taken;
    c.in_pos += taken;
    c.parser.Reset();
    SetDeadline(c, kLateRequest, std::nullopt);
    if (!Answer(c, std::move(c.req), &why)) return Drop(c, why);
    // Replies gather while requests keep coming; written when many, big, or the last.
    if (c.must_flush()) Flush(c);
  }
  if (c.closed) return;
  if (c.in_pos == c.in.size()) {
    c.in_pos = 0;
    if (c.in.capacity() > kKeptCapacity) std::string().swap(c.in);
    c.in.clear();
  } else if (c.in_pos >= kKeptCapacity) {
    c.in.erase(0, c.in_pos);
    c.in_pos = 0;
  }
  if (c.reply_pending() && !c.blocked) Flush(c);
  if (!c.closed) Watch(c);
}

// Writes what the peer takes now; the rest when epoll says it can take more, within the
// I/O timeout of the last progress (as a blocking send under SO_SNDTIMEO would).
void TcpStoreServer::Flush(Conn& c) {
  bool progress = false;
  while (c.reply_pending()) {
    const bool header = c.out_pos < c.out.size();
    const char* p = header ? c.out.data() + c.out_pos : c.out_value->value.data() + c.value_pos;
    const size_t n = header ? c.out.size() - c.out_pos : c.out_value->value.size() - c.value_pos;
    ssize_t w = n == 0 ? 0 : ::send(c.fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (w < 0) return Close(c);  // the peer is gone
    progress = progress || w > 0;
    (header ? c.out_pos : c.value_pos) += static_cast<size_t>(w);
    if (c.out_pos == c.out.size()) {
      c.out.clear();
      c.out_pos = 0;
    }
    if (c.out_value && c.value_pos == c.out_value->value.size()) {
      c.out_value.reset();
      c.value_pos = 0;
    }
  }
  c.blocked = c.reply_pending();
  if (!c.blocked) {
    SetDeadline(c, kLateReply, std::nullopt);
    if (c.close_after_reply) return Close(c);
  } else if (progress || !c.due[kLateReply]) {
    SetDeadline(c, kLateReply, Clock::now() + limits_.io_timeout);
  }
  Watch(c);
}

// What epoll should tell about this connection: that it can take more replies, that more
// requests arrived (none while a WAIT is parked or replies wait: they are answered in
// order), or nothing (a reset or hang-up is told anyway).
void TcpStoreServer::Watch(Conn& c) {
  const uint32_t want = c.reply_pending() ? EPOLLOUT : (c.wait ? 0u : EPOLLIN);
  if (want == c.events) return;
  c.events = want;
  epoll_event ev{want, {.u64 = c.id}};
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
}

void TcpStoreServer::SetDeadline(Conn& c, int kind, std::optional<Clock::time_point> when) {
  if (c.due[kind]) deadlines_.erase({*c.due[kind], c.id, kind});
  c.due[kind] = when;
  if (when) deadlines_.emplace(*when, c.id, kind);
}

void TcpStoreServer::Expire(Clock::time_point now) {
  const std::string t = sw::Seconds(limits_.io_timeout);
  while (!deadlines_.empty() && std::get<0>(*deadlines_.begin()) <= now && !stop_) {
    const auto [when, id, kind] = *deadlines_.begin();
    Conn& c = *conns_.at(id);
    SetDeadline(c, kind, std::nullopt);
    switch (kind) {
      case kLateFirst:
        Drop(c, "sent no request within " + t + " of connecting");
        break;
      case kLateRequest:
        Drop(c, "a request still incomplete " + t + " after its first byte");
        break;
      case kLateReply:
        Drop(c, "stopped reading its replies for " + t);
        break;
      default:
        FinishWait(c);
    }
  }
}

// Before its claim is granted, a connection to a store with a job token may send only the handshake.
StoreGate TcpStoreServer::Gate(const Conn& c) const {
  return access_.token && c.session.rank < 0 ? StoreGate::kHandshakeOnly : StoreGate::kAny;
}

bool TcpStoreServer::FileWait(Conn& c) {
  const auto& keys = c.wait->keys;
  while (c.wait_next < keys.size() && data_.count(keys[c.wait_next]) != 0) ++c.wait_next;
  if (c.wait_next == keys.size()) return true;
  c.filed = waiters_.emplace(keys[c.wait_next], c.id);
  return false;
}

void TcpStoreServer::FinishWait(Conn& c) {
  if (c.filed) waiters_.erase(*c.filed);
  c.filed.reset();
  if (std::exchange(c.parked, false)) --parked_;
  std::string reply;
  reply.reserve(c.wait->keys.size());
  for (size_t i = 0; i < c.wait->keys.size(); ++i) {
    reply.push_back(i < c.wait_next || data_.count(c.wait->keys[i]) != 0 ? 1 : 0);
  }
  c.wait.reset();
  SetDeadline(c, kLateWait, std::nullopt);
  c.Reply(reply, nullptr);
  ready_.push_back(c.id);  // written, and what it sent next read, by the loop
}

void TcpStoreServer::WakeWaiters(const std::string& key) {
  auto [first, last] = waiters_.equal_range(key);
  std::vector<uint64_t> woken;
  for (auto w = first; w != last; ++w) woken.push_back(w->second);
  waiters_.erase(first, last);
  for (uint64_t id : woken) {
    Conn& c = *conns_.at(id);
    c.filed.reset();
    ++woken_waits_;
    if (FileWait(c)) FinishWait(c);
  }
}

void TcpStoreServer::Drop(Conn& c, const std::string& why) {
  if (!stop_) Note("dropped peer " + c.session.peer + ": " + why, Log::kDroppedPeer);
  Close(c);
}

// The connection's bytes go back to the budget when it is freed (closed_, at the end of
// the loop's turn); nothing refers to it after this.
void TcpStoreServer::Close(Conn& c) {
  if (c.closed) return;
  c.closed = true;
  ::close(c.fd);  // and out of epoll
  if (c.filed) waiters_.erase(*c.filed);
  c.filed.reset();
  if (std::exchange(c.parked, false)) --parked_;
  for (int kind = 0; kind < kLateKinds; ++kind) SetDeadline(c, kind, std::nullopt);
  --open_;
  closed_.push_back(c.id);
}

}  // namespace trainer
