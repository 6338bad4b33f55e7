// The store's server against hostile peers: raw sockets that declare huge lengths and
// counts, stall mid-request, never speak, stop reading, or come in numbers. Each is
// dropped with a logged reason, nothing is allocated for what was only declared, and the
// honest client beside them carries on.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cluster/store_auth.h"
#include "cluster/tcp_store.h"

namespace trainer {
namespace {

using std::chrono::milliseconds;

std::string U32(uint32_t v) {
  std::string s;
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

std::string Op(uint8_t op) { return std::string(1, static_cast<char>(op)); }

// A peer speaking raw bytes to the store.
class RawPeer {
 public:
  // rcvbuf > 0 shrinks the receive buffer (before connecting), for a peer that stops reading.
  explicit RawPeer(int port, int rcvbuf = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (rcvbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    sockaddr_in me{};
    socklen_t len = sizeof(me);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&me), &len);
    name_ = "127.0.0.1:" + std::to_string(ntohs(me.sin_port));
  }
  ~RawPeer() { ::close(fd_); }
  RawPeer(const RawPeer&) = delete;
  RawPeer& operator=(const RawPeer&) = delete;

  bool connected() const { return connected_; }
  const std::string& name() const { return name_; }  // as the server's log names it
  bool Send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }
  // Exactly n bytes of reply (fewer when the server closes first, or sends less in 5 s).
  std::string Recv(size_t n) {
    timeval bounded{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &bounded, sizeof(bounded));
    std::string out(n, '\0');
    ssize_t got = ::recv(fd_, out.data(), n, MSG_WAITALL);
    out.resize(got > 0 ? static_cast<size_t>(got) : 0);
    return out;
  }
  // True once the server has closed the connection (replies before that are discarded).
  bool ClosedWithin(milliseconds within) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    char buf[4096];
    for (;;) {
      auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      if (::recv(fd_, buf, sizeof(buf), 0) <= 0) return true;  // EOF, or a reset
    }
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string name_;
};

// The log lines a server gave, from its threads.
struct Log {
  std::mutex mu;
  std::vector<std::string> lines;
  std::function<void(const std::string&)> Sink() {
    return [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu);
      lines.push_back(line);
    };
  }
  bool Has(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    return std::find(lines.begin(), lines.end(), line) != lines.end();
  }
  bool Find(const std::string& part) {
    std::lock_guard<std::mutex> lock(mu);
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(part) != l.npos; });
  }
  std::string All() {
    std::lock_guard<std::mutex> lock(mu);
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
  }
};

bool Eventually(const std::function<bool()>& what, milliseconds within = milliseconds(5000)) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (!what()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

// Resident set size of this process.
uint64_t RssBytes() {
  std::ifstream f("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

struct Served {
  Log log;
  std::unique_ptr<TcpStoreServer> server;
  std::unique_ptr<TcpStoreClient> honest;

  explicit Served(StoreLimits limits = {}, StoreAccess access = {}) {
    limits.log = log.Sink();
    auto s = TcpStoreServer::Start("127.0.0.1", 0, std::move(limits), std::move(access));
    EXPECT_TRUE(s.ok());
    if (!s.ok()) return;
    server = std::move(*s);
    auto c = TcpStoreClient::Connect("127.0.0.1", port(), milliseconds(2000), server->ChiefClaim());
    EXPECT_TRUE(c.ok());
    if (c.ok()) honest = std::move(*c);
    // Its first request at once, as a rank's is: a new connection must speak within the I/O timeout.
    EXPECT_TRUE(c.ok() && honest->Set("hello", "1").ok());
  }
  int port() const { return server->port(); }
  // The honest client still gets answers.
  bool StillServes(const std::string& key) {
    if (!honest->Set(key, "v").ok()) return false;
    auto v = honest->Get(key);
    return v.ok() && v->has_value() && **v == "v";
  }
};

std::string Dropped(const RawPeer& p, const std::string& why) { return "store: dropped peer " + p.name() + ": " + why; }

TEST(TcpStoreLimits, DeclaredGigabyteValueIsDroppedUnallocated) {
  Served s;
  RawPeer p(s.port());
  ASSERT_TRUE(p.Send(Op(1) + U32(1) + "k" + U32(1u << 30)));
  EXPECT_TRUE(p.ClosedWithin(milliseconds(5000)));
  EXPECT_TRUE(Eventually([&] {
    return s.log.Has(Dropped(p, "declared a value of 1073741824 bytes (the limit is 4194304)"));
  })) << s.log.All();
  EXPECT_LT(s.server->stats().peak_held_bytes, 4096u);
  EXPECT_TRUE(s.StillServes("after"));
}

// How much the chief's RSS may grow while it drops 32 hostile connections. Under TSan the
// per-thread and shadow state alone passes 16 MiB (17.7 MB measured); the attack this
// guards against cost ~1 GB, so the wider bound there still catches it. The exact count
// is peak_held_bytes, below.
#if defined(__SANITIZE_THREAD__)
constexpr uint64_t kRssGrowthBound = uint64_t{64} << 20;
#else
constexpr uint64_t kRssGrowthBound = uint64_t{16} << 20;
#endif

// The attack of issue 15: 16 connections of 80 bytes each, declaring 64 MiB values (the
// old limit), took the chief from 2 MB to 1027 MB. Then 16 declaring 1 GB.
TEST(TcpStoreLimits, SixteenHugeDeclarationsAtOnceCostNothing) {
  Served s;
  const uint64_t rss_before = RssBytes();
  uint64_t dropped = 0;
  for (uint32_t declared : {64u << 20, 1u << 30}) {
    std::vector<std::unique_ptr<RawPeer>> peers;
    for (int i = 0; i < 16; ++i) {
      peers.push_back(std::make_unique<RawPeer>(s.port()));
      std::string req = Op(1) + U32(8) + "fp/" + std::to_string(10000 + i) + U32(declared);
      ASSERT_TRUE(peers.back()->Send(req + std::string(80 - req.size(), 'x')));
    }
    for (auto& p : peers) EXPECT_TRUE(p->ClosedWithin(milliseconds(5000)));
    dropped += 16;
    EXPECT_TRUE(Eventually([&] { return s.server->stats().dropped_peers == dropped; })) << s.log.All();
  }
  EXPECT_EQ(s.server->stats().refused_peers, 0u);
  EXPECT_LT(RssBytes() - std::min(RssBytes(), rss_before), kRssGrowthBound);
  EXPECT_LT(s.server->stats().peak_held_bytes, 16u * 4096);
  EXPECT_TRUE(s.StillServes("after"));
}

// A length within the limit is still not reserved: the buffer grows with the bytes.
TEST(TcpStoreLimits, DeclaredLengthIsNotReservedAndAStallTimesOut) {
  StoreLimits limits;
  limits.io_timeout = milliseconds(1500);  // time enough to look at it mid-request
  Served s(limits);
  const uint64_t base = s.server->stats().held_bytes;  // the honest client's key
  RawPeer p(s.port());
  ASSERT_TRUE(p.Send(Op(1) + U32(1) + "k" + U32(4u << 20) + std::string(1000, 'x')));
  EXPECT_TRUE(Eventually([&] { return s.server->stats().held_bytes >= base + 900; }));
  EXPECT_LT(s.server->stats().held_bytes, base + (64u << 10));  // not 4 MiB
  EXPECT_TRUE(p.ClosedWithin(milliseconds(5000)));
  EXPECT_TRUE(Eventually([&] { return s.log.Has(Dropped(p, "a request still incomplete 1.5s after its first byte")); }))
      << s.log.All();
  EXPECT_TRUE(Eventually([&] { return s.server->stats().held_bytes == base; }));
  EXPECT_TRUE(s.StillServes("after"));
}

TEST(TcpStoreLimits, SilentPeerTimesOut) {
  StoreLimits limits;
  limits.io_timeout = milliseconds(300);
  Served s(limits);
  RawPeer p(s.port());
  EXPECT_TRUE(p.ClosedWithin(milliseconds(5000)));
  EXPECT_TRUE(Eventually([&] { return s.log.Has(Dropped(p, "sent no request within 0.3s of connecting")); }))
      << s.log.All();
  // A client idle between requests is not one: the honest client waited as long.
  EXPECT_TRUE(s.StillServes("after"));
}

TEST(TcpStoreLimits, KeysAndWaitsOverTheLimits) {
  Served s;
  RawPeer long_key(s.port()), many_keys(s.port()), wide_wait(s.port()), bad_op(s.port());
  ASSERT_TRUE(long_key.Send(Op(2) + U32(1u << 20)));
  ASSERT_TRUE(many_keys.Send(Op(4) + U32(1u << 20)));
  std::string wide = Op(4) + U32(2000);
  for (int i = 0; i < 2000; ++i) wide += U32(4000) + std::string(4000, 'k');
  wide_wait.Send(wide);  // the store hangs up after the 1,049th key's length: the rest fails to go
  ASSERT_TRUE(bad_op.Send(Op(9)));
  for (RawPeer* p : {&long_key, &many_keys, &wide_wait, &bad_op}) EXPECT_TRUE(p->ClosedWithin(milliseconds(5000)));
  for (const auto& line : {Dropped(long_key, "declared a key of 1048576 bytes (the limit is 4096)"),
                           Dropped(many_keys, "declared a WAIT for 1048576 keys (the limit is 65536)"),
                           Dropped(wide_wait, "declared a WAIT naming more than 4194304 bytes of keys"),
                           Dropped(bad_op, "sent unknown op 9")}) {
    EXPECT_TRUE(Eventually([&] { return s.log.Has(line); })) << line << "\n" << s.log.All();
  }
  EXPECT_TRUE(s.StillServes("after"));
}

TEST(TcpStoreLimits, TooManyConnectionsAreRefused) {
  StoreLimits limits;
  limits.max_connections = 4;  // the honest client holds one
  Served s(limits);
  std::vector<std::unique_ptr<RawPeer>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<RawPeer>(s.port()));
    ASSERT_TRUE(held.back()->Send(Op(3) + U32(1) + "k"));  // a CHECK: a real peer, idle after it
  }
  ASSERT_TRUE(Eventually([&] { return s.server->stats().connections == 4; }));
  RawPeer extra(s.port());
  EXPECT_TRUE(extra.ClosedWithin(milliseconds(5000)));
  EXPECT_TRUE(Eventually([&] {
    return s.log.Has("store: refused peer " + extra.name() + ": 4 connections open, the most it serves");
  })) << s.log.All();
  EXPECT_EQ(s.server->stats().refused_peers, 1u);
  EXPECT_TRUE(s.StillServes("during"));
  // One leaves: a newcomer gets its place.
  held.pop_back();
  ASSERT_TRUE(Eventually([&] { return s.server->stats().connections == 3; }));
  auto later = TcpStoreClient::Connect("127.0.0.1", s.port(), milliseconds(2000), StoreClaim{1});
  ASSERT_TRUE(later.ok());
  EXPECT_TRUE((*later)->Set("later/1", "1").ok());
}

// Peers that connect and leave over and over leave no threads or connections behind.
TEST(TcpStoreLimits, ConnectionChurnLeavesNothingBehind) {
  StoreLimits limits;
  limits.max_connections = 8;
  Served s(limits);
  for (int i = 1; i <= 200; ++i) {
    {
      auto c = TcpStoreClient::Connect("127.0.0.1", s.port(), milliseconds(2000), StoreClaim{i});
      ASSERT_TRUE(c.ok());
      ASSERT_TRUE((*c)->Set("churn/" + std::to_string(i), "x").ok()) << i;
    }
    // Its slot is free again once the server has seen it go (200 > 8: slots are reused).
    ASSERT_TRUE(Eventually([&] { return s.server->stats().connections == 1; })) << i;
  }
  EXPECT_EQ(s.server->stats().dropped_peers, 0u);
  EXPECT_EQ(s.server->stats().refused_peers, 0u);
}

TEST(TcpStoreLimits, HeldBytesInTotal) {
  StoreLimits limits;
  limits.max_held_bytes = 64u << 10;
  Served s(limits);
  auto c = TcpStoreClient::Connect("127.0.0.1", s.port(), milliseconds(2000), StoreClaim{1});
  ASSERT_TRUE(c.ok());
  int stored = 0;
  Status st = Status::Ok();
  for (; stored < 20; ++stored) {
    st = (*c)->Set("big" + std::to_string(stored) + "/1", std::string(10u << 10, 'v'));
    if (!st.ok()) break;
  }
  // Each costs 10 KiB (up to twice that while its buffer grows) + 128 of bookkeeping.
  EXPECT_GE(stored, 3);
  EXPECT_LE(stored, 6);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::kTransport);
  EXPECT_TRUE(Eventually([&] { return s.log.Find("its request would take the store past 65536 bytes held"); }))
      << s.log.All();
  EXPECT_LE(s.server->stats().peak_held_bytes, 64u << 10);
  auto v = s.honest->Get("big0/1");
  ASSERT_TRUE(v.ok() && v->has_value());
  EXPECT_EQ((*v)->size(), 10u << 10);
}

TEST(TcpStoreLimits, PeerThatStopsReadingIsDropped) {
  StoreLimits limits;
  limits.io_timeout = milliseconds(300);
  Served s(limits);
  ASSERT_TRUE(s.honest->Set("big", std::string(4u << 20, 'v')).ok());
  RawPeer p(s.port(), 4096);
  std::string gets;
  for (int i = 0; i < 8; ++i) gets += Op(2) + U32(3) + "big";
  ASSERT_TRUE(p.Send(gets));  // 32 MiB of replies it never reads
  EXPECT_TRUE(Eventually([&] { return s.log.Has(Dropped(p, "stopped reading its replies for 0.3s")); })) << s.log.All();
  EXPECT_TRUE(s.StillServes("after"));
}

TEST(TcpStoreLimits, ClientRefusesWhatTheServerWouldDrop) {
  Served s;
  auto st = s.honest->Set("k", std::string((4u << 20) + 1, 'v'));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(st.error().message, "store: a value of 4194305 bytes for k (the limit is 4194304)");
  EXPECT_EQ(s.honest->Get(std::string(4097, 'k')).error().message, "store: a key of 4097 bytes (the limit is 4096)");
  std::vector<std::string> keys(65537, "k");
  EXPECT_EQ(s.honest->Wait(keys, milliseconds(1)).error().message,
            "store: waiting for 65537 keys (the limit is 65536)");
  EXPECT_TRUE(s.StillServes("after"));
}

// --- The handshake (a store with a job token) against raw peers ---

constexpr char kSecret[] = "correct-horse-battery-staple-0123456789";

JobTokenPtr Token() { return *JobToken::FromSecret(kSecret, "IMGTOOL_FLEET_TOKEN"); }

std::string Claim(uint32_t rank, const std::string& who, const store_auth::Nonce& nonce, const std::string& proof) {
  return Op(6) + U32(rank) + U32(static_cast<uint32_t>(who.size())) + who +
         std::string(reinterpret_cast<const char*>(nonce.data()), nonce.size()) +
         U32(static_cast<uint32_t>(proof.size())) + proof;
}

// HELLO; the server's nonce.
store_auth::Nonce Hello(RawPeer& p) {
  store_auth::Nonce n{};
  EXPECT_TRUE(p.Send(Op(5)));
  std::string reply = p.Recv(33);
  EXPECT_EQ(reply.size(), 33u);
  EXPECT_EQ(reply[0], 1) << "the store must say it requires the token";
  if (reply.size() == 33) std::copy(reply.begin() + 1, reply.end(), n.begin());
  return n;
}

// Before its claim is granted, a peer of a store with a token may say HELLO and CLAIM,
// nothing else: anything else is refused at its first byte, so an outsider can neither
// read nor make the store read what it declares.
TEST(TcpStoreHandshake, OnlyTheHandshakeBeforeTheClaim) {
  Served s({}, StoreAccess{4, Token()});
  ASSERT_TRUE(s.honest);
  RawPeer big_set(s.port()), get(s.port()), claim_first(s.port()), hello_twice(s.port()), long_who(s.port());
  ASSERT_TRUE(big_set.Send(Op(1) + U32(4) + "fp/1" + U32(1u << 30)));
  ASSERT_TRUE(get.Send(Op(2) + U32(4) + "fp/0"));
  store_auth::Nonce zero{};
  ASSERT_TRUE(claim_first.Send(Claim(1, "x", zero, "")));
  Hello(hello_twice);
  ASSERT_TRUE(hello_twice.Send(Op(5)));
  Hello(long_who);
  ASSERT_TRUE(long_who.Send(Claim(1, std::string(4096, 'w'), zero, "")));
  for (RawPeer* p : {&big_set, &get, &claim_first, &hello_twice, &long_who}) {
    EXPECT_TRUE(p->ClosedWithin(milliseconds(5000)));
  }
  for (const auto& line : {Dropped(big_set, "sent SET before proving the job token (the store requires it)"),
                           Dropped(get, "sent GET before proving the job token (the store requires it)"),
                           Dropped(claim_first, "sent CLAIM before HELLO"), Dropped(hello_twice, "sent HELLO twice"),
                           Dropped(long_who, "declared a claimant's name of 4096 bytes (the limit is 256)")}) {
    EXPECT_TRUE(Eventually([&] { return s.log.Has(line); })) << line << "\n" << s.log.All();
  }
  EXPECT_LT(s.server->stats().peak_held_bytes, 4096u);
  EXPECT_EQ(s.log.All().find(kSecret), std::string::npos);
  EXPECT_TRUE(s.StillServes("after"));
}

// A proof is good for the connection whose nonce it signs, once: replayed on another
// connection (another nonce) it proves nothing. Every HELLO gets a fresh nonce.
TEST(TcpStoreHandshake, AProofIsBoundToItsConnection) {
  Served s({}, StoreAccess{4, Token()});
  ASSERT_TRUE(s.honest);
  RawPeer first(s.port()), second(s.port());
  const store_auth::Nonce n1 = Hello(first), n2 = Hello(second);
  EXPECT_NE(n1, n2);
  store_auth::Nonce mine{};
  mine.fill(7);
  const Mac proof = Token()->Sign(store_auth::ClaimMessage(n1, mine, 1, "w"));
  const std::string claim = Claim(1, "w", mine, std::string(reinterpret_cast<const char*>(proof.data()), proof.size()));
  // Replayed on the second connection: refused, and closed.
  ASSERT_TRUE(second.Send(claim));
  const std::string why = "a wrong proof of the job token (the claimant holds another token)";
  EXPECT_EQ(second.Recv(1 + 4 + why.size()), std::string(1, '\1') + U32(static_cast<uint32_t>(why.size())) + why);
  EXPECT_TRUE(second.ClosedWithin(milliseconds(5000)));
  // On its own connection: granted, with the store's proof.
  ASSERT_TRUE(first.Send(claim));
  std::string granted = first.Recv(1 + 4 + 32);
  ASSERT_EQ(granted.size(), 37u);
  EXPECT_EQ(granted.substr(0, 5), std::string(1, '\0') + U32(32));
  EXPECT_TRUE(
      Token()->Verify(store_auth::ChiefMessage(n1, mine, 1), reinterpret_cast<const uint8_t*>(granted.data() + 5), 32));
  ASSERT_TRUE(first.Send(Op(1) + U32(4) + "fp/1" + U32(2) + "d1"));
  EXPECT_EQ(first.Recv(1), std::string(1, '\0'));
  // The same claim again on the same connection: a second claim, dropped.
  ASSERT_TRUE(first.Send(claim));
  EXPECT_TRUE(first.ClosedWithin(milliseconds(5000)));
  EXPECT_TRUE(Eventually([&] { return s.log.Has(Dropped(first, "claimed a rank twice on one connection")); }))
      << s.log.All();
  auto v = s.honest->Get("fp/1");
  ASSERT_TRUE(v.ok() && v->has_value());
  EXPECT_EQ(**v, "d1");
  EXPECT_EQ(s.server->stats().refused_claims, 1u);
  EXPECT_TRUE(s.server->conflicts().empty());
}

}  // namespace
}  // namespace trainer
