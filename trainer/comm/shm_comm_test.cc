// ShmComm against what an allgather and a broadcast must produce, over many operations
// (so every slot is reused), buffers of 0 bytes to several slots, in place or not, with
// spinning and with futex waits; ranks on "other hosts" get no segment; a peer process
// that exits is named at once, not after the collective timeout; no name is left in /dev/shm.
#include "comm/shm_comm.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <thread>

#include "cluster/tcp_store.h"

namespace trainer {

namespace {

using RankFn = std::function<void(Comm&, int rank)>;

// Runs `size` ranks as threads of this process, each with its own store client.
// Returns each rank's set-up error or why_not ("" when it got a ShmComm).
std::vector<std::string> RunRanks(int size, const std::vector<ShmCommOptions>& options, const RankFn& fn) {
  auto server = TcpStoreServer::Start("127.0.0.1", 0);
  EXPECT_TRUE(server.ok());
  std::vector<std::string> outcome(static_cast<size_t>(size));
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r) {
    ranks.emplace_back([&, r] {
      auto store = TcpStoreClient::Connect("127.0.0.1", (*server)->port(), std::chrono::seconds(10),
                                           r == 0 ? (*server)->ChiefClaim() : StoreClaim(r));
      ASSERT_TRUE(store.ok());
      std::string why_not;
      auto comm = MakeShmComm(**store, r, size, options[static_cast<size_t>(r)], &why_not);
      if (!comm.ok()) {
        outcome[static_cast<size_t>(r)] = "error: " + comm.error().message;
      } else if (*comm == nullptr) {
        outcome[static_cast<size_t>(r)] = "no segment: " + why_not;
      } else {
        fn(**comm, r);
      }
    });
  }
  for (auto& t : ranks) t.join();
  return outcome;
}

float Value(int iter, int rank, size_t i) {
  return static_cast<float>(iter * 1000003 + rank * 7919 + static_cast<int>(i));
}

int NamesLeftInDevShm() {
  const std::string prefix = "imgtool-trainer-" + std::to_string(::getpid()) + "-";
  int n = 0;
  if (DIR* d = ::opendir("/dev/shm")) {
    while (dirent* e = ::readdir(d)) n += std::string(e->d_name).rfind(prefix, 0) == 0;
    ::closedir(d);
  }
  return n;
}

}  // namespace

TEST(ShmComm, AllGatherAndBroadcastOverManyOperations) {
  for (bool spin : {true, false}) {
    const int size = 3;
    ShmCommOptions o;
    o.spin = spin;
    o.collective_timeout = std::chrono::seconds(30);
    // 0 bytes, one float, a W1 slice, just over one slot, and three slots' worth.
    const std::vector<size_t> counts = {0, 1, 392 * 128, 65537, 150000};
    std::vector<int> failures(size, 0);
    auto outcome = RunRanks(size, std::vector<ShmCommOptions>(size, o), [&](Comm& comm, int r) {
      EXPECT_EQ(comm.rank(), r);
      EXPECT_EQ(comm.size(), size);
      for (int iter = 0; iter < 60; ++iter) {
        const size_t count = counts[static_cast<size_t>(iter) % counts.size()];
        std::vector<float> out(count * size, -1.0f), in(count);
        for (size_t i = 0; i < count; ++i) in[i] = Value(iter, r, i);
        const bool in_place = iter % 2 == 0;
        if (in_place) std::copy(in.begin(), in.end(), out.begin() + static_cast<long>(count) * r);
        Status st = comm.AllGather(in_place ? out.data() + count * r : in.data(), out.data(), count);
        if (!st.ok()) {
          ADD_FAILURE() << st.error().message;
          return;
        }
        for (int p = 0; p < size; ++p) {
          for (size_t i = 0; i < count; ++i)
            failures[r] += out[static_cast<size_t>(p) * count + i] != Value(iter, p, i);
        }
        std::vector<char> b(300000 + static_cast<size_t>(iter));
        const int root = iter % size;
        for (size_t i = 0; i < b.size(); ++i) b[i] = r == root ? static_cast<char>(i * 31 + iter) : 0;
        st = comm.Broadcast(b.data(), b.size(), root);
        if (!st.ok()) {
          ADD_FAILURE() << st.error().message;
          return;
        }
        for (size_t i = 0; i < b.size(); ++i) failures[r] += b[i] != static_cast<char>(i * 31 + iter);
      }
    });
    for (int r = 0; r < size; ++r) {
      EXPECT_EQ(outcome[static_cast<size_t>(r)], "") << "rank " << r;
      EXPECT_EQ(failures[static_cast<size_t>(r)], 0) << "rank " << r << (spin ? " spinning" : " futex");
    }
    EXPECT_EQ(NamesLeftInDevShm(), 0) << "the chief unlinks the segment's name once every rank mapped it";
  }
}

TEST(ShmComm, SharedWorkRunsEveryTaskOnceAndRoundsDoNotOverlap) {
  const int size = 3, rounds = 300, max_tasks = 64;
  ShmCommOptions o;
  o.shared_bytes = max_tasks * sizeof(uint32_t);
  o.collective_timeout = std::chrono::seconds(30);
  auto count_of = [](int round) { return (round * 7) % 61 + 1; };  // 1 .. 61 tasks, some rounds of one
  std::vector<int> wrong(size, 0), mine(size, 0);
  auto outcome = RunRanks(size, std::vector<ShmCommOptions>(size, o), [&](Comm& comm, int r) {
    SharedWork* work = SharedWorkOf(comm);
    ASSERT_NE(work, nullptr);
    ASSERT_EQ(work->region_bytes(), o.shared_bytes);
    auto* runs = reinterpret_cast<uint32_t*>(work->region());  // (max_tasks): times each task ran
    std::vector<uint32_t> want(max_tasks, 0);
    for (int round = 0; round < rounds; ++round) {
      const int count = count_of(round);
      if (!work->BeginRound(count).ok()) return ADD_FAILURE() << "BeginRound";
      for (int task = work->Claim(); task >= 0; task = work->Claim()) {
        if (task >= count) ++wrong[r];
        __atomic_fetch_add(&runs[task], 1u, __ATOMIC_RELAXED);
        ++mine[r];
        work->Done();
      }
      if (!work->EndRound().ok()) return ADD_FAILURE() << "EndRound";
      for (int k = 0; k < count; ++k) ++want[static_cast<size_t>(k)];
      // Between rounds nobody writes: every rank sees every task of every round so far run once.
      for (int k = 0; k < max_tasks; ++k) wrong[r] += runs[k] != want[static_cast<size_t>(k)];
    }
  });
  int total = 0, expected = 0;
  for (int round = 0; round < rounds; ++round) expected += count_of(round);
  for (int r = 0; r < size; ++r) {
    EXPECT_EQ(outcome[static_cast<size_t>(r)], "");
    EXPECT_EQ(wrong[static_cast<size_t>(r)], 0) << "rank " << r;
    total += mine[static_cast<size_t>(r)];
  }
  EXPECT_EQ(total, expected) << "every task claimed by exactly one rank";
}

TEST(ShmComm, RanksOnAnotherHostGetNoSegment) {
  std::vector<ShmCommOptions> o(3);
  o[2].host_key = "boot another-machine";
  auto outcome = RunRanks(3, o, [](Comm&, int) { ADD_FAILURE() << "no rank may get a segment"; });
  for (const auto& s : outcome) EXPECT_EQ(s, "no segment: rank 2 runs on another host or namespace");
  EXPECT_EQ(NamesLeftInDevShm(), 0);
}

TEST(ShmComm, APeerThatExitsIsNamedAtOnce) {
  auto server = TcpStoreServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(server.ok());
  const int port = (*server)->port();
  ShmCommOptions o;
  o.collective_timeout = std::chrono::seconds(60);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // rank 1: joins, then leaves without a word
    auto store = TcpStoreClient::Connect("127.0.0.1", port, std::chrono::seconds(10), StoreClaim(1));
    std::string why_not;
    auto comm = store.ok() ? MakeShmComm(**store, 1, 2, o, &why_not) : Result<std::unique_ptr<Comm>>(store.error());
    ::_exit(comm.ok() && *comm != nullptr ? 0 : 1);
  }
  auto store = TcpStoreClient::Connect("127.0.0.1", port, std::chrono::seconds(10), (*server)->ChiefClaim());
  ASSERT_TRUE(store.ok());
  std::string why_not;
  auto comm = MakeShmComm(**store, 0, 2, o, &why_not);
  ASSERT_TRUE(comm.ok()) << comm.error().message;
  ASSERT_NE(*comm, nullptr) << why_not;
  // First as a zombie nobody has reaped (a parent that has not looked yet), then reaped.
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);
  std::vector<float> buf(2 * 16);
  auto start = std::chrono::steady_clock::now();
  Status st = (*comm)->AllGather(buf.data(), buf.data(), 16);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int wstatus = 0;
  ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << "the child could not join";
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::kTransport);
  EXPECT_NE(st.error().message.find("rank 1 (pid " + std::to_string(child) + ") exited"), std::string::npos)
      << st.error().message;
  EXPECT_LT(seconds, 5.0) << "named by its pid, not after the 60 s collective timeout";

  st = (*comm)->Broadcast(buf.data(), 64, 1);  // reaped now: the pid itself is gone
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("rank 1 (pid " + std::to_string(child) + ") exited"), std::string::npos);
}

}  // namespace trainer
