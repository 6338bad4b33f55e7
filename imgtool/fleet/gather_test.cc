// The gather end to end: each worker a thread with its own ClusterConfig on 127.0.0.1,
// talking through a real store, fingerprints built in code.
#include "fleet/gather.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <optional>
#include <thread>

#include "cluster/tcp_store.h"

namespace imgtool::fleet {
namespace {

using std::chrono::milliseconds;

// A port nobody listens on right now (the store binds it and lets it go).
int FreePort() {
  auto s = trainer::TcpStoreServer::Start("127.0.0.1", 0);
  EXPECT_TRUE(s.ok());
  return s.ok() ? (*s)->port() : 0;
}

Fingerprint Fp(int rank, const std::string& nccl = "2.28.9") {
  Fingerprint fp;
  fp.fields = {{"image.digest", "sha256:" + std::string(64, 'a')},
               {"cuda.runtime", "13.0"},
               {"nccl", nccl},
               {"gpu.model", "NVIDIA H200"}};
  fp.node = {{"hostname", "node-" + std::to_string(rank)}};
  return fp;
}

struct Run {
  std::vector<std::optional<Result<Verdict>>> verdicts;  // nullopt: that rank did not run
  std::vector<GatherStats> stats;
};

// Runs ranks whose fingerprint is given (nullopt: the rank never starts) concurrently.
Run RunFleet(const std::vector<std::optional<Fingerprint>>& fps, GatherOptions options = {}, int port = 0) {
  const int n = static_cast<int>(fps.size());
  if (port == 0) port = FreePort();
  Run run;
  run.verdicts.resize(fps.size());
  run.stats.resize(fps.size());
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    if (!fps[static_cast<size_t>(r)]) continue;
    threads.emplace_back([&, r] {
      auto cluster = trainer::ClusterFromFlags(r, n, "127.0.0.1:" + std::to_string(port), "");
      ASSERT_TRUE(cluster.ok()) << cluster.error().message;
      run.verdicts[static_cast<size_t>(r)] =
          GatherVerdict(*cluster, *fps[static_cast<size_t>(r)], options, &run.stats[static_cast<size_t>(r)]);
    });
  }
  for (auto& t : threads) t.join();
  return run;
}

GatherOptions Quick(milliseconds timeout = milliseconds(10000)) {
  GatherOptions o;
  o.timeout = timeout;
  return o;
}

// Every rank that ran got a verdict, all of them equal; returns it.
Verdict SameVerdictEverywhere(const Run& run) {
  std::optional<Verdict> first;
  for (size_t r = 0; r < run.verdicts.size(); ++r) {
    if (!run.verdicts[r]) continue;
    const auto& v = *run.verdicts[r];
    EXPECT_TRUE(v.ok()) << "rank " << r << ": " << v.error().message;
    if (!v.ok()) continue;
    if (!first) {
      first = *v;
    } else {
      EXPECT_EQ(RenderText(*v), RenderText(*first)) << "rank " << r;
      EXPECT_TRUE(*v == *first) << "rank " << r << " got another verdict";
    }
  }
  return first.value_or(Verdict{});
}

TEST(Gather, FourIdenticalWorkersAllMatch) {
  auto run = RunFleet({Fp(0), Fp(1), Fp(2), Fp(3)}, Quick());
  Verdict v = SameVerdictEverywhere(run);
  EXPECT_TRUE(v.ok()) << RenderText(v);
  EXPECT_EQ(v.ExitCode(), 0);
  EXPECT_EQ(v.expected_workers, 4);
  ASSERT_EQ(v.workers.size(), 4u);
  EXPECT_EQ(v.workers[3].name, "worker 3");
  EXPECT_TRUE(v.missing.empty());
  EXPECT_TRUE(v.diffs.empty());
  EXPECT_EQ(run.stats[0].distinct_digests, 1);
  EXPECT_EQ(run.stats[1].distinct_digests, 0);
}

TEST(Gather, OneWorkerDiffersAndEveryWorkerSaysWhich) {
  auto run = RunFleet({Fp(0), Fp(1), Fp(2, "2.19.3"), Fp(3)}, Quick());
  Verdict v = SameVerdictEverywhere(run);
  EXPECT_EQ(v.ExitCode(), 1) << RenderText(v);
  ASSERT_EQ(v.diffs.size(), 1u) << RenderText(v);
  EXPECT_EQ(v.diffs[0].field, "nccl");
  ASSERT_EQ(v.diffs[0].groups.size(), 2u);
  EXPECT_EQ(v.diffs[0].groups[0], (ValueGroup{"2.28.9", {0, 1, 3}}));
  EXPECT_EQ(v.diffs[0].groups[1], (ValueGroup{"2.19.3", {2}}));
  EXPECT_EQ(run.stats[0].distinct_digests, 2);
}

// The chief is the odd one out, and two workers share another digest: their full
// fingerprint is stored once and both are named.
TEST(Gather, TheChiefDiffersAndTwoWorkersShareADigest) {
  auto run = RunFleet({Fp(0, "2.19.3"), Fp(1), Fp(2), Fp(3, "2.27.0"), Fp(4)}, Quick());
  Verdict v = SameVerdictEverywhere(run);
  EXPECT_EQ(v.ExitCode(), 1);
  ASSERT_EQ(v.diffs.size(), 1u) << RenderText(v);
  ASSERT_EQ(v.diffs[0].groups.size(), 3u);
  EXPECT_EQ(v.diffs[0].groups[0], (ValueGroup{"2.28.9", {1, 2, 4}}));
  EXPECT_EQ(run.stats[0].distinct_digests, 3);
}

TEST(Gather, IgnoredFieldsDoNotCount) {
  GatherOptions o = Quick();
  o.ignore = {"nccl"};
  auto run = RunFleet({Fp(0), Fp(1, "2.19.3"), Fp(2)}, o);
  Verdict v = SameVerdictEverywhere(run);
  EXPECT_TRUE(v.ok()) << RenderText(v);
  EXPECT_EQ(run.stats[0].distinct_digests, 1);
}

TEST(Gather, AMissingWorkerIsNamedByEveryone) {
  auto start = std::chrono::steady_clock::now();
  auto run = RunFleet({Fp(0), Fp(1), Fp(2), std::nullopt}, Quick(milliseconds(1000)));
  auto took = std::chrono::steady_clock::now() - start;
  Verdict v = SameVerdictEverywhere(run);
  EXPECT_EQ(v.ExitCode(), 3);
  EXPECT_EQ(v.missing, std::vector<int>{3});
  EXPECT_TRUE(v.diffs.empty());
  // The chief waits its timeout, then everyone hears at once (not timeout + margin).
  EXPECT_LT(took, milliseconds(8000));
}

TEST(Gather, AWorkerWhoseChiefNeverAnswersReportsTheChiefMissing) {
  int port = FreePort();
  auto cluster = trainer::ClusterFromFlags(1, 2, "127.0.0.1:" + std::to_string(port), "");
  ASSERT_TRUE(cluster.ok());
  GatherStats stats;
  auto v = GatherVerdict(*cluster, Fp(1), Quick(milliseconds(300)), &stats);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->ExitCode(), 3);
  EXPECT_EQ(v->missing, std::vector<int>{0});
  ASSERT_TRUE(v->notes.count("chief"));
  EXPECT_EQ(v->notes.at("chief"),
            "worker 0 at 127.0.0.1:" + std::to_string(port) + ": no answer within 0.3s (Connection refused)");
  EXPECT_EQ(stats.bytes_sent, 0u);
}

// The point of exchanging digests: a worker's traffic does not grow with the fleet.
TEST(Gather, BytesPerWorkerDoNotGrowWithTheFleet) {
  std::map<int, GatherStats> worker1;
  for (int n : {2, 8}) {
    std::vector<std::optional<Fingerprint>> fps;
    for (int r = 0; r < n; ++r) fps.emplace_back(Fp(r));
    auto run = RunFleet(fps, Quick());
    EXPECT_TRUE(SameVerdictEverywhere(run).ok());
    for (int r = 2; r < n; ++r) {  // ranks of one digit: the same key lengths
      EXPECT_EQ(run.stats[static_cast<size_t>(r)].bytes_sent, run.stats[1].bytes_sent) << "rank " << r;
      EXPECT_EQ(run.stats[static_cast<size_t>(r)].bytes_received, run.stats[1].bytes_received) << "rank " << r;
    }
    worker1[n] = run.stats[1];
    std::printf("N=%d: worker 1 sent %llu B, received %llu B; the chief sent %llu B, received %llu B\n", n,
                static_cast<unsigned long long>(run.stats[1].bytes_sent),
                static_cast<unsigned long long>(run.stats[1].bytes_received),
                static_cast<unsigned long long>(run.stats[0].bytes_sent),
                static_cast<unsigned long long>(run.stats[0].bytes_received));
  }
  EXPECT_GT(worker1[2].bytes_sent, 0u);
  EXPECT_EQ(worker1[2].bytes_sent, worker1[8].bytes_sent);
  EXPECT_EQ(worker1[2].bytes_received, worker1[8].bytes_received);
}

TEST(Gather, PortInUseIsAClearError) {
  auto squatter = trainer::TcpStoreServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(squatter.ok());
  const int port = (*squatter)->port();
  auto cluster = trainer::ClusterFromFlags(0, 2, "127.0.0.1:" + std::to_string(port), "");
  ASSERT_TRUE(cluster.ok());
  auto v = GatherVerdict(*cluster, Fp(0), Quick(milliseconds(500)));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().kind, ErrorKind::kTransport);
  const std::string p = std::to_string(port);
  EXPECT_EQ(v.error().message,
            "fleet check: worker 0 serves the rendezvous store on the chief's address (from --rendezvous): store "
            "127.0.0.1:" +
                p + ": cannot listen: port " + p + " on 127.0.0.1 is in use (another process listens there)");
  // A port a launcher derived (Slurm's, from the job and step ids) says how to pick another.
  cluster->port_hint = "port " + p + " is job 7 step 0's under Slurm; set --rendezvous HOST:PORT or IMGTOOL_RENDEZVOUS";
  cluster->store_source = "SLURM_STEP_NODELIST";
  v = GatherVerdict(*cluster, Fp(0), Quick(milliseconds(500)));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message,
            "fleet check: worker 0 serves the rendezvous store on the chief's address (from SLURM_STEP_NODELIST): "
            "store 127.0.0.1:" +
                p + ": cannot listen: port " + p +
                " on 127.0.0.1 is in use (another process "
                "listens there); port " +
                p +
                " is job 7 step 0's under Slurm; set --rendezvous HOST:PORT or "
                "IMGTOOL_RENDEZVOUS");
}

TEST(Gather, WorkersUnderASchedulerAreNamedByNodeAndRank) {
  trainer::ClusterConfig c;
  c.world_size = 3;
  c.launcher = "slurm";
  c.tasks = {{"rank", 0, "", "n1"}, {"rank", 1, "", "n1"}, {"rank", 2, "", ""}};
  auto w = WorkersOf(c);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].name, "n1 rank 0");
  EXPECT_EQ(w[1].name, "n1 rank 1");
  EXPECT_EQ(w[2].name, "rank 2");
  auto tf = trainer::ClusterFromFlags(0, 2, "127.0.0.1:1", "");
  ASSERT_TRUE(tf.ok());
  EXPECT_EQ(WorkersOf(*tf)[1].name, "worker 1");
}

// The trainer runs next on the same address: the check must leave the port free.
TEST(Gather, TheStorePortIsFreeAfterwards) {
  int port = FreePort();
  auto run = RunFleet({Fp(0), Fp(1)}, Quick(), port);
  SameVerdictEverywhere(run);
  auto again = trainer::TcpStoreServer::Start("127.0.0.1", port);
  EXPECT_TRUE(again.ok()) << again.error().message;
}

TEST(Gather, OneWorkerNeedsNoNetwork) {
  auto cluster = trainer::ClusterFromFlags(0, 1, "", "");
  ASSERT_TRUE(cluster.ok());
  GatherStats stats;
  auto v = GatherVerdict(*cluster, Fp(0), Quick(), &stats);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_TRUE(v->ok());
  EXPECT_EQ(v->expected_workers, 1);
  EXPECT_EQ(stats.bytes_sent, 0u);
}

// --- Who takes part: claims, write-once keys, the job token ---

trainer::ClusterConfig Rank(int r, int n, int port) {
  return *trainer::ClusterFromFlags(r, n, "127.0.0.1:" + std::to_string(port), "");
}

trainer::JobTokenPtr Token(const std::string& secret) {
  return *trainer::JobToken::FromSecret(secret, "IMGTOOL_FLEET_TOKEN");
}

// The red team's attack: while the chief waits, a process that is no worker connects and
// overwrites fp/1 and fp/2 with the chief's digest, so that the differing worker 2 would
// look like the others. Its writes are refused and everyone still sees worker 2 differ.
TEST(Gather, AnOutsiderCannotOverwriteTheWorkersFingerprints) {
  const int port = FreePort();
  std::vector<Result<Verdict>> v(3, MakeError(ErrorKind::kInternal, "did not run"));
  auto run = [&](int r, const Fingerprint& fp) {
    return std::thread([&, r, fp] { v[r] = GatherVerdict(Rank(r, 3, port), fp, Quick()); });
  };
  std::thread chief = run(0, Fp(0)), one = run(1, Fp(1));
  auto outsider = trainer::TcpStoreClient::Connect("127.0.0.1", port, milliseconds(5000));
  ASSERT_TRUE(outsider.ok());
  ASSERT_TRUE((*outsider)->Wait({"fp/0", "fp/1"}, milliseconds(5000)).ok());
  const std::string chiefs = **(*outsider)->Get("fp/0");
  for (const char* key : {"fp/1", "fp/2", "verdict"}) {
    auto st = (*outsider)->Set(key, chiefs);
    ASSERT_FALSE(st.ok()) << key;
    EXPECT_EQ(st.error().kind, ErrorKind::kDenied);
    EXPECT_NE(st.error().message.find("this connection claimed no rank"), std::string::npos) << st.error().message;
  }
  std::thread two = run(2, Fp(2, "2.19.3"));
  for (auto* t : {&chief, &one, &two}) t->join();
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(v[r].ok()) << r << ": " << v[r].error().message;
    EXPECT_EQ(v[r]->ExitCode(), 1) << RenderText(*v[r]);
    ASSERT_EQ(v[r]->diffs.size(), 1u);
    EXPECT_EQ(v[r]->diffs[0].groups[1], (ValueGroup{"2.19.3", {2}}));
  }
}

// Two processes started as worker 1: the second to claim the rank is refused naming
// both, and the chief refuses a verdict, so neither can pass for worker 1.
TEST(Gather, TwoProcessesWithOneRankAreRefusedNamingBoth) {
  const int port = FreePort();
  std::vector<Result<Verdict>> v(4, MakeError(ErrorKind::kInternal, "did not run"));
  std::atomic<int> ones_done{0};
  std::thread chief([&] { v[0] = GatherVerdict(Rank(0, 3, port), Fp(0), Quick()); });
  std::thread one_a([&] {
    v[1] = GatherVerdict(Rank(1, 3, port), Fp(1), Quick());
    ++ones_done;
  });
  std::thread one_b([&] {
    v[2] = GatherVerdict(Rank(1, 3, port), Fp(1, "2.19.3"), Quick());
    ++ones_done;
  });
  while (ones_done.load() == 0) std::this_thread::sleep_for(milliseconds(5));  // one was refused
  std::thread two([&] { v[3] = GatherVerdict(Rank(2, 3, port), Fp(2), Quick()); });
  for (auto* t : {&chief, &one_a, &one_b, &two}) t->join();
  int refused_claims = 0;
  for (const auto& r : v) {
    ASSERT_FALSE(r.ok()) << RenderText(*r);
    EXPECT_EQ(r.error().kind, ErrorKind::kDenied) << r.error().message;
    EXPECT_NE(r.error().message.find("rank 1 is claimed twice: first by 127.0.0.1:"), std::string::npos)
        << r.error().message;
    if (r.error().message.find("refused the claim of rank 1") != std::string::npos) ++refused_claims;
  }
  EXPECT_EQ(refused_claims, 1);
  EXPECT_EQ(v[0].error().message.rfind("fleet check: rank 1 is claimed twice", 0), 0u) << v[0].error().message;
}

TEST(Gather, AJobTokenAdmitsTheJobOnly) {
  const int port = FreePort();
  GatherOptions o = Quick();
  o.token = Token("correct-horse-battery-staple-0123456789");
  std::vector<Result<Verdict>> v(3, MakeError(ErrorKind::kInternal, "did not run"));
  std::thread chief([&] { v[0] = GatherVerdict(Rank(0, 3, port), Fp(0), o); });
  std::thread one([&] { v[1] = GatherVerdict(Rank(1, 3, port), Fp(1), o); });
  // Worker 2's place, tried by processes without the token and with another one: refused
  // outright (not "the chief is missing"), taking nothing from the job.
  GatherOptions none = Quick(), other = Quick();
  other.token = Token("an-outsiders-guess-0123456789");
  for (const GatherOptions* bad : {&none, &other}) {
    auto r = GatherVerdict(Rank(2, 3, port), Fp(2, "2.19.3"), *bad);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ErrorKind::kDenied) << r.error().message;
    EXPECT_EQ(r.error().message.rfind("fleet check: worker 2: store 127.0.0.1:", 0), 0u) << r.error().message;
  }
  std::thread two([&] { v[2] = GatherVerdict(Rank(2, 3, port), Fp(2), o); });
  for (auto* t : {&chief, &one, &two}) t->join();
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(v[r].ok()) << r << ": " << v[r].error().message;
    EXPECT_EQ(v[r]->ExitCode(), 0) << RenderText(*v[r]);
  }
}

// A chief whose verdict gives everyone a fingerprint that is not this worker's did not
// compare what this worker sent: the worker says so instead of printing OK.
TEST(Gather, AWorkerRefusesAVerdictThatIsNotAboutIt) {
  const int port = FreePort();
  auto server = trainer::TcpStoreServer::Start("127.0.0.1", port, {}, trainer::StoreAccess{2, nullptr});
  ASSERT_TRUE(server.ok());
  std::optional<Result<Verdict>> worker;
  std::thread t([&] { worker = GatherVerdict(Rank(1, 2, port), Fp(1, "2.19.3"), Quick()); });
  auto chief = trainer::TcpStoreClient::Connect("127.0.0.1", port, milliseconds(2000), (*server)->ChiefClaim());
  ASSERT_TRUE(chief.ok());
  const std::string d0 = FingerprintDigest(Fp(0), {});
  ASSERT_TRUE((*chief)->Set("fp/0", d0).ok());
  ASSERT_TRUE((*chief)->Wait({"fp/1"}, milliseconds(5000)).ok());
  Verdict lie;
  lie.expected_workers = 2;
  lie.workers = WorkersOf(Rank(0, 2, port));
  lie.notes["fingerprint"] = d0;
  ASSERT_TRUE((*chief)->Set("verdict", VerdictToWire(lie, WireWorkers::kOmit)).ok());
  t.join();
  ASSERT_TRUE(worker && !worker->ok());
  EXPECT_EQ(worker->error().kind, ErrorKind::kIntegrity);
  EXPECT_EQ(worker->error().message, "the verdict of worker 0 at 127.0.0.1:" + std::to_string(port) +
                                         " gives every worker fingerprint " + d0 + ", but this worker's is " +
                                         FingerprintDigest(Fp(1, "2.19.3"), {}) +
                                         ": the chief did not compare what this worker sent");
}

TEST(Gather, WorkersAreNamedAfterTheirTfConfigTasks) {
  auto cluster = trainer::ParseTfConfig(
      R"({"cluster": {"chief": ["10.0.0.1:2222"], "worker": ["10.0.0.2:2222", "10.0.0.3:2222"]},
          "task": {"type": "worker", "index": 1}})");
  ASSERT_TRUE(cluster.ok());
  auto w = WorkersOf(*cluster);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0], (WorkerId{0, "chief 0", "10.0.0.1:2222"}));
  EXPECT_EQ(w[1], (WorkerId{1, "worker 0", "10.0.0.2:2222"}));
  EXPECT_EQ(w[2], (WorkerId{2, "worker 1", "10.0.0.3:2222"}));
}

}  // namespace
}  // namespace imgtool::fleet
