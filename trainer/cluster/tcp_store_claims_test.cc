// Who may write what (store_keys.h) and who may take part (job_token.h), through the real
// client: keys are write-once, a connection writes only as the rank it claimed, a rank is
// claimed once, and a store with a token admits only its holders, which it proves back.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>

#include "cluster/job_token.h"
#include "cluster/store_keys.h"
#include "cluster/tcp_store.h"

namespace trainer {
namespace {

using std::chrono::milliseconds;

constexpr char kSecret[] = "correct-horse-battery-staple-0123456789";
constexpr char kOtherSecret[] = "another-jobs-token-9876543210-abcdef";

JobTokenPtr Token(const std::string& secret) {
  auto t = JobToken::FromSecret(secret, "IMGTOOL_FLEET_TOKEN");
  EXPECT_TRUE(t.ok());
  return t.ok() ? *t : nullptr;
}

struct Lines {
  std::mutex mu;
  std::vector<std::string> lines;
  std::function<void(const std::string&)> Sink() {
    return [this](const std::string& l) {
      std::lock_guard<std::mutex> lock(mu);
      lines.push_back(l);
    };
  }
  std::string All() {
    std::lock_guard<std::mutex> lock(mu);
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
  }
};

struct Store {
  Lines log;
  std::unique_ptr<TcpStoreServer> server;
  explicit Store(StoreAccess access = {}) {
    StoreLimits limits;
    limits.log = log.Sink();
    auto s = TcpStoreServer::Start("127.0.0.1", 0, std::move(limits), std::move(access));
    EXPECT_TRUE(s.ok());
    if (s.ok()) server = std::move(*s);
  }
  Result<std::unique_ptr<TcpStoreClient>> Join(int rank, JobTokenPtr token = nullptr) {
    return TcpStoreClient::Connect("127.0.0.1", server->port(), milliseconds(2000), StoreClaim(rank, std::move(token)));
  }
  // This process's own client as rank 0, the chief.
  Result<std::unique_ptr<TcpStoreClient>> Chief() {
    return TcpStoreClient::Connect("127.0.0.1", server->port(), milliseconds(2000), server->ChiefClaim());
  }
};

std::string Sha(char c) { return "sha256:" + std::string(64, c); }

std::string Host() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  return host;
}

TEST(TcpStoreKeys, TheLastPartNamesTheOwner) {
  auto rank = [](std::string_view key) {
    KeyOwner o = OwnerOf(key);
    return o.kind == KeyOwner::kShared ? -1 : static_cast<int>(o.rank);
  };
  EXPECT_EQ(rank("fp/3"), 3);
  EXPECT_EQ(rank("arrive/12"), 12);
  EXPECT_EQ(rank("gloo/addr/7"), 7);
  EXPECT_EQ(rank("shm/host/0"), 0);
  EXPECT_EQ(rank("5"), 5);
  EXPECT_EQ(rank("fpfull/" + Sha('a')), -1);
  // Everything else is the chief's: not a canonical rank, not a digest.
  for (std::string_view chiefs : {"verdict", "go", "shm/segment", "fp/03", "fp/", "fp/-1", "fp/3a", "fp/16777216",
                                  "fp/99999999999", "gloo/rank_3", "fpfull/sha256:AB", "x/sha256:", "fp/3/"}) {
    EXPECT_EQ(rank(chiefs), 0) << chiefs;
  }
  EXPECT_EQ(rank("fpfull/sha256:" + std::string(64, 'A')), 0);  // not lower-case hex
  EXPECT_EQ(rank("fpfull/sha256:" + std::string(63, 'a')), 0);
  EXPECT_EQ(DescribeOwner(OwnerOf("fp/2")), "rank 2");
  EXPECT_EQ(DescribeOwner(OwnerOf("verdict")), "rank 0 (the chief)");
  EXPECT_EQ(DescribeOwner(OwnerOf("fpfull/" + Sha('b'))), "any rank");
}

TEST(TcpStoreClaims, KeysAreWriteOnce) {
  Store s;
  auto chief = s.Chief();
  auto one = s.Join(1);
  ASSERT_TRUE(chief.ok() && one.ok());
  ASSERT_TRUE((*chief)->Set("verdict", "first").ok());
  auto again = (*chief)->Set("verdict", "second");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::kDenied);
  EXPECT_EQ(again.error().message, "store 127.0.0.1:" + std::to_string(s.server->port()) +
                                       ": refused to store verdict: verdict exists already (rank 0 wrote it); "
                                       "keys are write-once");
  EXPECT_EQ(**(*chief)->Get("verdict"), "first");
  // A shared key: whoever comes first stores it; Add tells the second it was there.
  EXPECT_TRUE(*(*one)->Add("fpfull/" + Sha('c'), "from 1"));
  EXPECT_FALSE(*(*chief)->Add("fpfull/" + Sha('c'), "from 0"));
  EXPECT_EQ(**(*chief)->Get("fpfull/" + Sha('c')), "from 1");
  EXPECT_EQ(s.server->stats().denied_writes, 1u);  // the shared key's race is not an incident
}

TEST(TcpStoreClaims, ARankWritesOnlyItsOwnKeys) {
  Store s;
  auto chief = s.Chief();
  auto one = s.Join(1);
  auto reader = TcpStoreClient::Connect("127.0.0.1", s.server->port(), milliseconds(2000));
  ASSERT_TRUE(chief.ok() && one.ok() && reader.ok());
  EXPECT_TRUE((*one)->Set("fp/1", "d1").ok());
  EXPECT_TRUE((*one)->Set("gloo/addr/1", "a1").ok());
  EXPECT_TRUE((*chief)->Set("fp/0", "d0").ok());
  const std::string at = "store 127.0.0.1:" + std::to_string(s.server->port()) + ": refused to store ";
  struct Case {
    TcpStoreClient* who;
    std::string key, why;
  } cases[] = {
      {one->get(), "fp/2", "fp/2 is rank 2's, not rank 1's"},
      {one->get(), "fp/0", "fp/0 is rank 0 (the chief)'s, not rank 1's"},
      {one->get(), "verdict", "verdict is rank 0 (the chief)'s, not rank 1's"},
      {chief->get(), "fp/1", "fp/1 is rank 1's, not rank 0's"},
      {reader->get(), "fp/1", "fp/1 is rank 1's; this connection claimed no rank"},
      {reader->get(), "fpfull/" + Sha('d'), "fpfull/" + Sha('d') + " is any rank's; this connection claimed no rank"},
  };
  for (const auto& c : cases) {
    auto st = c.who->Set(c.key, "forged");
    ASSERT_FALSE(st.ok()) << c.key;
    EXPECT_EQ(st.error().kind, ErrorKind::kDenied);
    EXPECT_EQ(st.error().message, at + c.key + ": " + c.why);
  }
  EXPECT_EQ(**(*reader)->Get("fp/1"), "d1");
  EXPECT_FALSE((*reader)->Get("fp/2")->has_value());
  EXPECT_EQ(s.server->stats().denied_writes, 6u);
  EXPECT_NE(s.log.All().find("store: denied a write by 127.0.0.1:"), std::string::npos) << s.log.All();
  // Publish reads back what it stored.
  EXPECT_TRUE((*one)->Publish("ack/1", "1").ok());
}

TEST(TcpStoreClaims, ASecondClaimOfARankIsRefusedNamingBoth) {
  Store s(StoreAccess{3, nullptr});
  auto first = s.Join(1);
  ASSERT_TRUE(first.ok());
  auto second = s.Join(1);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().kind, ErrorKind::kDenied);
  const std::string me = " (pid " + std::to_string(::getpid()) + " on " + Host() + ")";
  const std::string& m = second.error().message;
  const std::string head = "store 127.0.0.1:" + std::to_string(s.server->port()) +
                           ": refused the claim of rank 1: rank 1 is claimed twice: first by 127.0.0.1:";
  EXPECT_EQ(m.rfind(head, 0), 0u) << m;
  EXPECT_NE(m.find(me + ", then by 127.0.0.1:"), std::string::npos) << m;
  EXPECT_EQ(m.size() - m.rfind(me), me.size()) << m;  // ends with the second's pid and host
  // The server keeps the line for the chief, and logs it.
  auto conflicts = s.server->conflicts();
  ASSERT_EQ(conflicts.size(), 1u);
  EXPECT_EQ(conflicts[0], m.substr(m.find("rank 1 is claimed twice")));
  EXPECT_NE(s.log.All().find("store: refused the claim of rank 1 by 127.0.0.1:"), std::string::npos);
  // The rank stays its first claimant's, also once that one has gone.
  first->reset();
  EXPECT_FALSE(s.Join(1).ok());
  EXPECT_EQ(s.server->conflicts().size(), 2u);
  // A rank outside the job is refused, and is no conflict.
  auto outside = s.Join(3);
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.error().message.find("refused the claim of rank 3: rank 3 is not one of the job's 3 ranks"),
            std::string::npos)
      << outside.error().message;
  EXPECT_EQ(s.server->conflicts().size(), 2u);
  EXPECT_EQ(s.server->stats().refused_claims, 3u);
  EXPECT_TRUE(s.Join(2).ok());
}

// Rank 0 speaks for the chief (the verdict, the go): only the process that serves the
// store may claim it, with its server's own key, whether the job has a token or not, and
// whoever holds the job's token.
TEST(TcpStoreClaims, OnlyTheServersProcessClaimsRankZero) {
  for (const JobTokenPtr& job : {JobTokenPtr(), Token(kSecret)}) {
    Store s(StoreAccess{3, job});
    for (const JobTokenPtr& key : {JobTokenPtr(), job, Token(kOtherSecret)}) {
      auto outsider = s.Join(0, key);
      ASSERT_FALSE(outsider.ok());
      EXPECT_EQ(outsider.error().kind, ErrorKind::kDenied);
      EXPECT_NE(outsider.error().message.find(
                    "refused the claim of rank 0: rank 0 is the chief's, claimed only by the process that serves the "
                    "store"),
                std::string::npos)
          << outsider.error().message;
    }
    EXPECT_TRUE(s.server->conflicts().empty());  // refused outsiders are no conflict
    auto chief = s.Chief();
    ASSERT_TRUE(chief.ok()) << chief.error().message;
    EXPECT_TRUE((*chief)->Set("verdict", "v").ok());
  }
}

// Two processes with one rank racing: exactly one wins, the other is told who won.
TEST(TcpStoreClaims, RacingClaimsOfOneRankHaveOneWinner) {
  Store s;
  constexpr int kRacers = 16;
  std::vector<std::unique_ptr<TcpStoreClient>> won(kRacers);
  std::vector<std::string> lost(kRacers);
  std::vector<std::thread> racers;
  for (int i = 0; i < kRacers; ++i) {
    racers.emplace_back([&, i] {
      auto c = s.Join(5);
      if (c.ok()) {
        won[static_cast<size_t>(i)] = std::move(*c);
      } else {
        lost[static_cast<size_t>(i)] = c.error().message;
      }
    });
  }
  for (auto& t : racers) t.join();
  EXPECT_EQ(std::count_if(won.begin(), won.end(), [](const auto& c) { return c != nullptr; }), 1);
  for (const auto& m : lost) {
    if (!m.empty()) {
      EXPECT_NE(m.find("rank 5 is claimed twice: first by 127.0.0.1:"), std::string::npos) << m;
    }
  }
  EXPECT_EQ(s.server->conflicts().size(), static_cast<size_t>(kRacers - 1));
}

TEST(TcpStoreToken, TheRightTokenIsAdmitted) {
  Store s(StoreAccess{2, Token(kSecret)});
  auto chief = s.Chief();
  auto one = s.Join(1, Token(kSecret));
  ASSERT_TRUE(chief.ok()) << chief.error().message;
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_TRUE((*one)->Set("fp/1", "d1").ok());
  EXPECT_TRUE((*chief)->Wait({"fp/1"}, milliseconds(1000)).ok());
  EXPECT_EQ(**(*chief)->Get("fp/1"), "d1");
  EXPECT_EQ(s.server->stats().refused_claims, 0u);
}

TEST(TcpStoreToken, AWrongOrMissingTokenIsRefusedAndTheSecretNeverShows) {
  Store s(StoreAccess{2, Token(kSecret)});
  const std::string at = "store 127.0.0.1:" + std::to_string(s.server->port()) + ": ";
  auto wrong = s.Join(1, Token(kOtherSecret));
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().kind, ErrorKind::kDenied);
  EXPECT_EQ(wrong.error().message,
            at + "refused the claim of rank 1: a wrong proof of the job token (the claimant holds another token)");
  auto none = s.Join(1);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().kind, ErrorKind::kDenied);
  EXPECT_EQ(none.error().message, at + "it requires the job token, and this process has none (set "
                                       "IMGTOOL_FLEET_TOKEN to the job's token, as for every process of the job)");
  // A process without a token that reads anyway is dropped at its first byte.
  auto reader = TcpStoreClient::Connect("127.0.0.1", s.server->port(), milliseconds(2000));
  ASSERT_TRUE(reader.ok());
  auto peek = (*reader)->Get("fp/1");
  ASSERT_FALSE(peek.ok());
  EXPECT_EQ(peek.error().kind, ErrorKind::kTransport);
  // Refused outsiders take no rank and are no conflict: the job goes on.
  EXPECT_TRUE(s.Join(1, Token(kSecret)).ok());
  EXPECT_TRUE(s.server->conflicts().empty());
  const std::string log = s.log.All();
  EXPECT_NE(log.find("store: refused the claim of rank 1 by 127.0.0.1:"), std::string::npos) << log;
  EXPECT_NE(log.find("sent GET before proving the job token (the store requires it)"), std::string::npos) << log;
  for (const std::string& text : {log, wrong.error().message, none.error().message}) {
    EXPECT_EQ(text.find(kSecret), std::string::npos);
    EXPECT_EQ(text.find(kOtherSecret), std::string::npos);
  }
}

TEST(TcpStoreToken, AClientWithATokenRefusesAnOpenStore) {
  Store s;
  auto c = s.Join(1, Token(kSecret));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind, ErrorKind::kDenied);
  EXPECT_EQ(c.error().message, "store 127.0.0.1:" + std::to_string(s.server->port()) +
                                   ": this process holds a job token (IMGTOOL_FLEET_TOKEN) but the store asks for "
                                   "none: the chief runs without it, or something else serves its port");
}

// Something else on the chief's port that says it wants a token and grants every claim,
// with a proof it cannot make: the client must not believe it.
TEST(TcpStoreToken, AStoreThatCannotProveTheTokenIsRefused) {
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  socklen_t len = sizeof(a);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  std::thread impostor([listener] {
    int fd = ::accept(listener, nullptr, nullptr);
    timeval bounded{5, 0};  // a client that believed us keeps its connection: do not wait for it for ever
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &bounded, sizeof(bounded));
    char buf[4096];
    (void)::recv(fd, buf, 1, MSG_WAITALL);  // HELLO
    std::string hello(1, '\x01');           // a token required
    hello += std::string(32, 'n');
    (void)::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL);
    (void)::recv(fd, buf, sizeof(buf), 0);  // the CLAIM
    std::string granted = std::string(1, '\0') + std::string("\x20\0\0\0", 4) + std::string(32, 'p');
    (void)::send(fd, granted.data(), granted.size(), MSG_NOSIGNAL);
    (void)::recv(fd, buf, sizeof(buf), 0);  // until the client hangs up
    ::close(fd);
  });
  auto c = TcpStoreClient::Connect("127.0.0.1", ntohs(a.sin_port), milliseconds(2000), StoreClaim(1, Token(kSecret)));
  impostor.join();
  ::close(listener);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind, ErrorKind::kDenied);
  EXPECT_NE(c.error().message.find("it did not prove that it holds the job token (IMGTOOL_FLEET_TOKEN): it is not "
                                   "this job's chief, or the chief holds another token"),
            std::string::npos)
      << c.error().message;
}

TEST(TcpStoreToken, WhereTheTokenComesFrom) {
  auto short_one = JobToken::FromSecret("tooshort", "IMGTOOL_FLEET_TOKEN");
  ASSERT_FALSE(short_one.ok());
  EXPECT_EQ(short_one.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(short_one.error().message,
            "IMGTOOL_FLEET_TOKEN: a job token of 8 bytes; it needs 16 to 4096 (e.g. `openssl rand -hex 32`)");
  // Sources are asked in order; the first with a token wins, an unset one is skipped.
  const std::string var = "IMGTOOL_TEST_TOKEN_" + std::to_string(::getpid());
  ::unsetenv(var.c_str());
  auto none = FindJobToken({EnvironmentTokenSource(var)});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  ::setenv(var.c_str(), kSecret, 1);
  TokenSource fixed = [] { return JobToken::FromSecret(kOtherSecret, "a scheduler's credential"); };
  auto env_first = FindJobToken({EnvironmentTokenSource(var), fixed});
  ASSERT_TRUE(env_first.ok() && *env_first);
  EXPECT_EQ((*env_first)->source(), var);
  auto fixed_first = FindJobToken({fixed, EnvironmentTokenSource(var)});
  ASSERT_TRUE(fixed_first.ok() && *fixed_first);
  EXPECT_EQ((*fixed_first)->source(), "a scheduler's credential");
  ::setenv(var.c_str(), "short", 1);
  auto bad = FindJobToken({EnvironmentTokenSource(var), fixed});
  ASSERT_FALSE(bad.ok());  // set but unusable: an error, not the next source
  EXPECT_EQ(bad.error().message.find("short"), std::string::npos);
  ::unsetenv(var.c_str());
  // The MAC: the same message and key verify; another key, message or length does not.
  auto t = Token(kSecret);
  const Mac m = t->Sign("message");
  EXPECT_TRUE(t->Verify("message", m.data(), m.size()));
  EXPECT_FALSE(t->Verify("messagE", m.data(), m.size()));
  EXPECT_FALSE(t->Verify("message", m.data(), m.size() - 1));
  EXPECT_FALSE(Token(kOtherSecret)->Verify("message", m.data(), m.size()));
}

}  // namespace
}  // namespace trainer
