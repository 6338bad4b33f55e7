#include "cluster/tcp_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

namespace trainer {

using std::chrono::milliseconds;

TEST(TcpStore, SetGetCheckWait) {
  auto server = TcpStoreServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(server.ok()) << server.error().message;
  int port = (*server)->port();
  auto a = TcpStoreClient::Connect("127.0.0.1", port, milliseconds(2000), (*server)->ChiefClaim());
  auto b = TcpStoreClient::Connect("127.0.0.1", port, milliseconds(2000));  // reads only
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE(*(*b)->Check("k"));
  std::thread later([&] {
    std::this_thread::sleep_for(milliseconds(50));
    EXPECT_TRUE((*a)->Set("k", std::string("v\0x", 3)).ok());
  });
  EXPECT_TRUE((*b)->Wait({"k"}, milliseconds(5000)).ok());
  later.join();
  auto v = (*b)->Get("k");
  ASSERT_TRUE(v.ok() && v->has_value());
  EXPECT_EQ(**v, std::string("v\0x", 3));
  EXPECT_FALSE((*b)->Get("absent")->has_value());
}

TEST(TcpStore, WaitTimesOutNamingKeys) {
  auto server = TcpStoreServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(server.ok());
  auto c = TcpStoreClient::Connect("127.0.0.1", (*server)->port(), milliseconds(2000), (*server)->ChiefClaim());
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE((*c)->Set("x", "1").ok());
  std::vector<std::string> missing;
  auto st = (*c)->Wait({"x", "y", "z"}, milliseconds(100), &missing);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(missing, (std::vector<std::string>{"y", "z"}));
  EXPECT_NE(st.error().message.find("timed out after 0.1s waiting for y, z"), std::string::npos);
}

// WAIT blocks in the server: it answers as soon as the last key is set, not at a poll tick
// and not at the timeout.
TEST(TcpStore, WaitReturnsWhenTheLastKeyIsSet) {
  auto server = TcpStoreServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(server.ok());
  int port = (*server)->port();
  auto a = TcpStoreClient::Connect("127.0.0.1", port, milliseconds(2000), (*server)->ChiefClaim());
  auto b = TcpStoreClient::Connect("127.0.0.1", port, milliseconds(2000));
  ASSERT_TRUE(a.ok() && b.ok());
  std::thread later([&] {
    std::this_thread::sleep_for(milliseconds(100));
    EXPECT_TRUE((*a)->Set("one", "1").ok());
    std::this_thread::sleep_for(milliseconds(100));
    EXPECT_TRUE((*a)->Set("two", "2").ok());
  });
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> missing;
  EXPECT_TRUE((*b)->Wait({"one", "two"}, milliseconds(20000), &missing).ok());
  auto waited = std::chrono::steady_clock::now() - t0;
  later.join();
  EXPECT_TRUE(missing.empty());
  EXPECT_GE(waited, milliseconds(150));
  EXPECT_LT(waited, milliseconds(5000));
  // Keys that exist already: an immediate answer.
  EXPECT_TRUE((*b)->Wait({"two", "one"}, milliseconds(0)).ok());
}

TEST(TcpStore, WaitWakesWhenTheServerStops) {
  auto server = TcpStoreServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(server.ok());
  auto c = TcpStoreClient::Connect("127.0.0.1", (*server)->port(), milliseconds(2000));
  ASSERT_TRUE(c.ok());
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(100));
    server.value().reset();
  });
  auto t0 = std::chrono::steady_clock::now();
  auto st = (*c)->Wait({"never"}, milliseconds(30000));
  auto waited = std::chrono::steady_clock::now() - t0;
  stopper.join();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::kTransport);
  EXPECT_NE(st.error().message.find("connection lost"), std::string::npos) << st.error().message;
  EXPECT_LT(waited, milliseconds(5000));
}

// A whole fleet connects at once and waits on one key: the backlog and a thread per
// connection hold it, and one SET wakes everyone.
TEST(TcpStore, ManyClientsWaitForOneKey) {
  constexpr int kClients = 256;
  auto server = TcpStoreServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(server.ok());
  int port = (*server)->port();
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      auto c = TcpStoreClient::Connect("127.0.0.1", port, milliseconds(20000), StoreClaim{i + 1});
      if (!c.ok()) return;
      if (!(*c)->Set("arrive/" + std::to_string(i + 1), "x").ok()) return;
      if ((*c)->Wait({"go"}, milliseconds(20000)).ok()) ++ok;
    });
  }
  auto chief = TcpStoreClient::Connect("127.0.0.1", port, milliseconds(2000), (*server)->ChiefClaim());
  ASSERT_TRUE(chief.ok());
  std::vector<std::string> keys;
  for (int i = 1; i <= kClients; ++i) keys.push_back("arrive/" + std::to_string(i));
  EXPECT_TRUE((*chief)->Wait(keys, milliseconds(20000)).ok());
  EXPECT_TRUE((*chief)->Set("go", "1").ok());
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kClients);
}

// The counters count the wire bytes of the format in tcp_store.h.
int ThreadsOfThisProcess() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// What a SET costs does not grow with the connections waiting on other keys, and the
// connections cost no threads: 64 workers wait for "verdict" while a chief-like WAIT
// names 64 keys; the 64 SETs of those keys look at that one WAIT only (once each: it is
// filed under the first key it misses, and resumes from there), and "verdict" wakes its 64.
TEST(TcpStore, ASetLooksOnlyAtTheWaitersOfItsKey) {
  auto server = TcpStoreServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(server.ok());
  const int port = (*server)->port();
  auto chief = TcpStoreClient::Connect("127.0.0.1", port, milliseconds(2000), (*server)->ChiefClaim());
  ASSERT_TRUE(chief.ok());
  constexpr int kWorkers = 64;
  std::vector<std::string> parts;
  for (int i = 0; i < kWorkers; ++i) parts.push_back("part/k" + std::to_string(i));
  const int threads_before = ThreadsOfThisProcess();
  std::vector<std::unique_ptr<TcpStoreClient>> workers;
  for (int i = 0; i < kWorkers + 1; ++i) {
    auto c = TcpStoreClient::Connect("127.0.0.1", port, milliseconds(2000));
    ASSERT_TRUE(c.ok());
    workers.push_back(std::move(*c));
  }
  EXPECT_EQ(ThreadsOfThisProcess(), threads_before) << "a connection must not cost the server a thread";
  std::vector<std::thread> waiting;
  std::atomic<int> ok{0};
  for (int i = 0; i < kWorkers; ++i) {
    waiting.emplace_back(
        [&, i] { ok += workers[static_cast<size_t>(i)]->Wait({"verdict"}, milliseconds(20000)).ok(); });
  }
  waiting.emplace_back([&] { ok += workers.back()->Wait(parts, milliseconds(20000)).ok(); });
  for (int i = 0; i < 2000 && (*server)->stats().parked_waits < kWorkers + 1; ++i) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_EQ((*server)->stats().parked_waits, kWorkers + 1);
  for (const auto& k : parts) ASSERT_TRUE((*chief)->Set(k, "1").ok());
  for (int i = 0; i < 2000 && (*server)->stats().parked_waits > kWorkers; ++i)
    std::this_thread::sleep_for(milliseconds(5));
  EXPECT_EQ((*server)->stats().parked_waits, kWorkers);
  EXPECT_EQ((*server)->stats().woken_waits, static_cast<uint64_t>(kWorkers))
      << "each SET looks at the one WAIT filed under its key";
  ASSERT_TRUE((*chief)->Set("verdict", "ok").ok());
  for (auto& t : waiting) t.join();
  EXPECT_EQ(ok, kWorkers + 1);
  EXPECT_EQ((*server)->stats().woken_waits, static_cast<uint64_t>(2 * kWorkers));
  EXPECT_EQ((*server)->stats().parked_waits, 0);
}

// Replies to pipelined requests come back in order (GetMany sends 256 GETs before reading).
TEST(TcpStore, GetManyReadsEveryKeyInOrder) {
  auto server = TcpStoreServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(server.ok());
  auto c = TcpStoreClient::Connect("127.0.0.1", (*server)->port(), milliseconds(2000), (*server)->ChiefClaim());
  ASSERT_TRUE(c.ok());
  std::vector<std::string> keys;
  for (int i = 0; i < 1000; ++i) {
    keys.push_back("many/k" + std::to_string(i));
    if (i % 3 != 0) {
      ASSERT_TRUE((*c)->Set(keys.back(), std::string(static_cast<size_t>(i % 7) * 1000, 'a' + i % 26)).ok());
    }
  }
  keys.emplace_back("many/big");
  ASSERT_TRUE((*c)->Set("many/big", std::string(1u << 20, 'b')).ok());
  auto values = (*c)->GetMany(keys);
  ASSERT_TRUE(values.ok()) << values.error().message;
  ASSERT_EQ(values->size(), keys.size());
  for (int i = 0; i < 1000; ++i) {
    const auto& v = (*values)[static_cast<size_t>(i)];
    if (i % 3 == 0) {
      EXPECT_FALSE(v.has_value()) << i;
    } else {
      ASSERT_TRUE(v.has_value()) << i;
      EXPECT_EQ(*v, std::string(static_cast<size_t>(i % 7) * 1000, 'a' + i % 26)) << i;
    }
  }
  EXPECT_EQ(values->back(), std::string(1u << 20, 'b'));
}

TEST(TcpStore, ByteCounters) {
  auto server = TcpStoreServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(server.ok());
  auto c = TcpStoreClient::Connect("127.0.0.1", (*server)->port(), milliseconds(2000), StoreClaim(1));
  ASSERT_TRUE(c.ok());
  TcpStoreClient& cl = **c;
  // HELLO 1, reply 1 + 32; CLAIM 1 + 4 + (4 + who) + 32 + (4 + 0), reply 1 + (4 + 0).
  const uint64_t who = cl.bytes_sent() - 46;
  EXPECT_GT(who, 0u);
  EXPECT_EQ(cl.bytes_received(), 38u);
  const uint64_t s0 = cl.bytes_sent(), r0 = cl.bytes_received();
  ASSERT_TRUE(cl.Set("key/1", "value").ok());  // 1 + 4 + 5 + 4 + 5; reply 1
  EXPECT_EQ(cl.bytes_sent() - s0, 19u);
  EXPECT_EQ(cl.bytes_received() - r0, 1u);
  ASSERT_TRUE(cl.Get("key/1").ok());  // 1 + 4 + 5; reply 1 + 4 + 5
  EXPECT_EQ(cl.bytes_sent() - s0, 29u);
  EXPECT_EQ(cl.bytes_received() - r0, 11u);
  ASSERT_TRUE(cl.Check("nope").ok());  // 1 + 4 + 4; reply 1
  EXPECT_EQ(cl.bytes_sent() - s0, 38u);
  EXPECT_EQ(cl.bytes_received() - r0, 12u);
  ASSERT_TRUE(cl.Wait({"key/1"}, milliseconds(1000)).ok());  // 1 + 4 + (4 + 5) + 4; reply 1
  EXPECT_EQ(cl.bytes_sent() - s0, 56u);
  EXPECT_EQ(cl.bytes_received() - r0, 13u);
  // A client that claims nothing (a reader of an open store) says nothing before its requests.
  auto reader = TcpStoreClient::Connect("127.0.0.1", (*server)->port(), milliseconds(2000));
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->bytes_sent(), 0u);
}

TEST(TcpStore, PortInUseSaysSo) {
  auto first = TcpStoreServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(first.ok());
  int port = (*first)->port();
  auto second = TcpStoreServer::Start("127.0.0.1", port);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().kind, ErrorKind::kTransport);
  const std::string p = std::to_string(port);
  EXPECT_EQ(second.error().message, "store 127.0.0.1:" + p + ": cannot listen: port " + p +
                                        " on 127.0.0.1 is in use (another process listens there)");
}

TEST(TcpStore, ConnectGivesUpAfterTimeout) {
  // Find a port nobody listens on by opening and closing a server.
  int port;
  {
    auto s = TcpStoreServer::Start("127.0.0.1", 0);
    ASSERT_TRUE(s.ok());
    port = (*s)->port();
  }
  auto c = TcpStoreClient::Connect("127.0.0.1", port, milliseconds(200));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind, ErrorKind::kTransport);
  EXPECT_NE(c.error().message.find("cannot reach the rendezvous store at 127.0.0.1:"), std::string::npos);
}

}  // namespace trainer
