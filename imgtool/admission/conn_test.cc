// The server's connection bounds without a server: the pool gives each task a thread of
// its own up to the cap and refuses beyond it; the watchdog shuts a socket whose deadline
// passed (waking a reader blocked on it) and leaves alone one disarmed or forgotten.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "admission/conn_pool.h"
#include "admission/conn_watchdog.h"

namespace imgtool::admission {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Blocks every task until opened; counts the tasks inside at once.
struct Gate {
  std::promise<void> open;
  std::shared_future<void> opened = open.get_future().share();
  std::atomic<int> inside{0};
  std::function<void()> Task() {
    return [this] {
      ++inside;
      opened.wait();
    };
  }
  void WaitInside(int n) {
    for (int i = 0; i < 400 && inside.load() < n; ++i) std::this_thread::sleep_for(milliseconds(5));
  }
};

TEST(ConnectionPool, EveryTaskGetsAThreadUpToTheCap) {
  Gate g;
  ConnectionPool pool(2, 6);
  EXPECT_EQ(pool.threads(), 2u);
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(pool.Run(g.Task())) << i;
  g.WaitInside(6);
  EXPECT_EQ(g.inside.load(), 6);  // none waits behind a busy one
  EXPECT_EQ(pool.threads(), 6u);
  EXPECT_FALSE(pool.Run(g.Task()));  // the seventh is refused, not queued
  EXPECT_EQ(pool.running(), 6u);
  g.open.set_value();
  for (int i = 0; i < 400 && pool.running() != 0; ++i) std::this_thread::sleep_for(milliseconds(5));
  EXPECT_TRUE(pool.Run([] {}));
  pool.Shutdown();
  EXPECT_EQ(pool.threads(), 0u);
  EXPECT_FALSE(pool.Run([] {}));
}

TEST(ConnectionPool, ThreadsBeyondTheWarmOnesEndWhenIdle) {
  Gate g;
  ConnectionPool pool(1, 4, milliseconds(50));
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(pool.Run(g.Task()));
  g.WaitInside(4);
  g.open.set_value();
  for (int i = 0; i < 400 && pool.threads() != 1; ++i) std::this_thread::sleep_for(milliseconds(5));
  EXPECT_EQ(pool.threads(), 1u);
  std::atomic<bool> ran{false};
  EXPECT_TRUE(pool.Run([&ran] { ran = true; }));
  pool.Shutdown();
  EXPECT_TRUE(ran.load());
}

// A connected pair: [0] the server's side, [1] the client's.
struct Pair {
  int fd[2] = {-1, -1};
  Pair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
  ~Pair() {
    ::close(fd[0]);
    ::close(fd[1]);
  }
};

// Reads the server's side until the read ends; how long that took.
std::future<milliseconds> BlockedReader(int fd) {
  return std::async(std::launch::async, [fd] {
    auto t0 = steady_clock::now();
    char c;
    while (::recv(fd, &c, 1, 0) > 0) {
    }
    return std::chrono::duration_cast<milliseconds>(steady_clock::now() - t0);
  });
}

TEST(ConnectionWatchdog, CutsASocketPastItsDeadline) {
  ConnectionWatchdog w;
  Pair p;
  int key = 0;
  w.Register(&key, p.fd[0], steady_clock::now() + milliseconds(150));
  auto reader = BlockedReader(p.fd[0]);
  // A byte now and then is no progress that counts: the deadline is for the whole request.
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(::send(p.fd[1], "x", 1, MSG_NOSIGNAL), 1);
    std::this_thread::sleep_for(milliseconds(30));
  }
  ASSERT_EQ(reader.wait_for(milliseconds(2000)), std::future_status::ready);
  auto took = reader.get();
  EXPECT_GE(took, milliseconds(100));
  EXPECT_LT(took, milliseconds(1000));
  EXPECT_EQ(w.cut(), 1u);
  // A later Register of the same key keeps the entry it has (the handshake step comes once).
  w.Register(&key, p.fd[0], steady_clock::now());
  w.Forget(&key);
  EXPECT_EQ(w.watched(), 0u);
}

TEST(ConnectionWatchdog, LeavesDisarmedAndForgottenSocketsAlone) {
  ConnectionWatchdog w;
  Pair answering, gone;
  int a = 0, b = 0;
  w.Register(&a, answering.fd[0], steady_clock::now() + milliseconds(50));
  w.Disarm(&a);  // a request being answered
  w.Register(&b, gone.fd[0], steady_clock::now() + milliseconds(50));
  w.Forget(&b);  // closed by the server: the number may be someone else's now
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(w.cut(), 0u);
  EXPECT_EQ(::send(answering.fd[1], "x", 1, MSG_NOSIGNAL), 1);
  char c;
  EXPECT_EQ(::recv(answering.fd[0], &c, 1, MSG_DONTWAIT), 1);  // still open
  // Rearmed after the answer: the next request owes its deadline again.
  w.Rearm(&a, steady_clock::now() + milliseconds(50));
  auto reader = BlockedReader(answering.fd[0]);
  ASSERT_EQ(reader.wait_for(milliseconds(2000)), std::future_status::ready);
  EXPECT_EQ(w.cut(), 1u);
  w.Rearm(&b, steady_clock::now());  // unknown keys are not added by Rearm
  EXPECT_EQ(w.watched(), 1u);
}

TEST(ConnectionWatchdog, LogsCutsAndRefusalsNowAndThen) {
  std::mutex mu;
  std::vector<std::string> lines;
  {
    ConnectionWatchdog w(
        [&](const std::string& l) {
          std::lock_guard<std::mutex> lock(mu);
          lines.push_back(l);
        },
        milliseconds(100));
    Pair p;
    int key = 0;
    w.Register(&key, p.fd[0], steady_clock::now());
    w.CountRefused();
    w.CountRefused();
    std::this_thread::sleep_for(milliseconds(350));
    w.Forget(&key);
  }
  ASSERT_EQ(lines.size(), 1u);  // quiet periods say nothing
  EXPECT_EQ(lines[0],
            "slow clients: 1 connection(s) cut (no whole request by the read deadline), 2 refused (at the connection "
            "cap)");
}

}  // namespace
}  // namespace imgtool::admission
