// The perf preflight: the decision (pure), the record and the verdict's perf on the wire,
// the report lines; then the step end to end with 4 threads on 127.0.0.1 (tiny sizes: the
// figures are not checked, only that every worker has them and the verdicts agree).
#include <gtest/gtest.h>

#include <thread>

#include "cluster/tcp_store.h"
#include "fleet/compare.h"
#include "fleet/gather.h"
#include "fleet/perf_verdict.h"

namespace imgtool::fleet {
namespace {

PerfFigures Gemm(int64_t milli) {
  PerfFigures f;
  f.milli[kPerfGemm] = milli;
  return f;
}

PerfFigures Both(int64_t gemm, int64_t allreduce) {
  PerfFigures f = Gemm(gemm);
  f.milli[kPerfAllreduce] = allreduce;
  return f;
}

TEST(PerfDecide, MedianOddEvenEmpty) {
  EXPECT_EQ(MedianMilli({}), 0);
  EXPECT_EQ(MedianMilli({7}), 7);
  EXPECT_EQ(MedianMilli({3, 1, 2}), 2);
  EXPECT_EQ(MedianMilli({4, 1, 3, 2}), 2);  // (2 + 3) / 2, rounded down
  EXPECT_EQ(MedianMilli({10, 20}), 15);
}

TEST(PerfDecide, FlagsTheSlowWorkerOnly) {
  std::map<int, PerfFigures> in = {
      {0, Both(29500, 1200)}, {1, Both(30000, 1210)}, {2, Both(12100, 1190)}, {3, Both(29000, 1205)}};
  PerfVerdict v = DecidePerf(in, 500, false);
  EXPECT_EQ(v.medians.at(kPerfGemm), 29250);  // even N: (29000 + 29500) / 2
  ASSERT_EQ(v.flags.size(), 1u);
  EXPECT_EQ(v.flags[0], (PerfFlag{2, kPerfGemm, 12100, 29250, ""}));
  EXPECT_TRUE(v.Fails());
  EXPECT_EQ(v.rows.size(), 4u);
  EXPECT_TRUE(v.complete);
  // The same figures give the same flags.
  EXPECT_EQ(DecidePerf(in, 500, false), v);
  EXPECT_EQ(PerfFlagLine(v.flags[0], "worker 2", 500),
            "worker 2 (rank 2): gemm 12.1 GFLOP/s, 41% of the median 29.2: below 50%");
}

TEST(PerfDecide, ExactlyAtTheThresholdIsNotFlagged) {
  // median 20000; 10000 is exactly 50%: not below.
  PerfVerdict v = DecidePerf({{0, Gemm(10000)}, {1, Gemm(20000)}, {2, Gemm(30000)}}, 500, false);
  EXPECT_TRUE(v.flags.empty());
  v = DecidePerf({{0, Gemm(9999)}, {1, Gemm(20000)}, {2, Gemm(30000)}}, 500, false);
  ASSERT_EQ(v.flags.size(), 1u);
  EXPECT_EQ(v.flags[0].rank, 0);
}

TEST(PerfDecide, AllEqualOneWorkerTies) {
  EXPECT_TRUE(DecidePerf({{0, Gemm(5)}, {1, Gemm(5)}, {2, Gemm(5)}}, 1000, false).flags.empty());
  PerfVerdict one = DecidePerf({{0, Gemm(1)}}, 1000, false);
  EXPECT_TRUE(one.flags.empty());
  EXPECT_EQ(one.medians.at(kPerfGemm), 1);
  // Two slow, two fast: the median is between them; the slow pair is flagged only when
  // below the threshold of it.
  PerfVerdict ties = DecidePerf({{0, Gemm(10)}, {1, Gemm(10)}, {2, Gemm(100)}, {3, Gemm(100)}}, 500, false);
  EXPECT_EQ(ties.medians.at(kPerfGemm), 55);
  ASSERT_EQ(ties.flags.size(), 2u);
  EXPECT_EQ(ties.flags[0].rank, 0);
  EXPECT_EQ(ties.flags[1].rank, 1);
}

TEST(PerfDecide, FailedWorkerIsFlaggedAndWarnOnlyDoesNotFail) {
  PerfFigures failed;
  failed.error = "allreduce over Gloo: peer closed";
  PerfVerdict v = DecidePerf({{0, Gemm(10)}, {1, failed}}, 500, true);
  ASSERT_EQ(v.flags.size(), 1u);
  EXPECT_EQ(PerfFlagLine(v.flags[0], "worker 1", 500),
            "worker 1 (rank 1): perf step failed: allreduce over Gloo: peer closed");
  EXPECT_FALSE(v.Fails());  // --perf-warn
  Verdict verdict;
  verdict.expected_workers = 2;
  verdict.workers = {{0, "worker 0", ""}, {1, "worker 1", ""}};
  verdict.perf = DecidePerf({{0, Gemm(10)}, {1, failed}}, 500, false);
  EXPECT_EQ(verdict.ExitCode(), kPerfExitCode);
  EXPECT_EQ(verdict.Summary(), "fleet check: SLOW: worker 1 (perf step failed) below 50% of the median");
  verdict.perf.warn_only = true;
  EXPECT_EQ(verdict.ExitCode(), 0);
  verdict.missing = {1};
  EXPECT_EQ(verdict.ExitCode(), 3);  // missing takes precedence
}

TEST(PerfDecide, LargeFleetCarriesFlaggedRowsOnly) {
  std::map<int, PerfFigures> in;
  for (int r = 0; r < kPerfMaxRows + 1; ++r) in[r] = Gemm(r == 7 ? 1 : 1000);
  PerfVerdict v = DecidePerf(in, 500, false);
  EXPECT_FALSE(v.complete);
  ASSERT_EQ(v.rows.size(), 1u);
  EXPECT_EQ(v.rows.begin()->first, 7);
}

TEST(PerfRecord, RoundTripAndStrict) {
  auto back = PerfRecordFromWire(PerfRecordToWire(Both(12100, 1240)));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, Both(12100, 1240));
  PerfFigures failed;
  failed.error = "x";
  ASSERT_TRUE(PerfRecordFromWire(PerfRecordToWire(failed)).ok());
  for (const char* bad :
       {"{}", "[]", R"({"figures":{"gemm":-1}})", R"({"figures":{"gemm":1.5}})", R"({"figures":{"tflops":1}})",
        R"({"figures":{},"error":"x"})", R"({"error":""})", R"({"figures":{"gemm":10000000000000000}})"}) {
    EXPECT_FALSE(PerfRecordFromWire(bad).ok()) << bad;
  }
}

TEST(PerfRecord, RingRecordEntries) {
  const std::string rec = RingRecordToWire({'a', 'b'}, {'c'});
  EXPECT_EQ(*RingRecordEntry(rec, 0), (std::vector<char>{'a', 'b'}));
  EXPECT_EQ(*RingRecordEntry(rec, 1), (std::vector<char>{'c'}));
  EXPECT_FALSE(RingRecordEntry(rec, 2).ok());
  EXPECT_FALSE(RingRecordEntry(rec.substr(0, rec.size() - 1), 1).ok());       // cut short
  EXPECT_FALSE(RingRecordEntry(std::string("\xff\xff\xff\x7f", 4), 0).ok());  // a 2 GB length
  EXPECT_FALSE(RingRecordEntry("", 0).ok());
}

Verdict WithPerf() {
  Verdict v;
  v.expected_workers = 3;
  v.workers = {{0, "chief 0", "10.0.0.1:2222"}, {1, "worker 0", "10.0.0.2:2222"}, {2, "worker 1", "10.0.0.3:2222"}};
  v.notes["fingerprint"] = "sha256:" + std::string(64, 'c');
  v.perf = DecidePerf({{0, Both(30000, 1000)}, {1, Both(29000, 990)}, {2, Both(9000, 1010)}}, 500, false);
  return v;
}

TEST(PerfWire, RoundTripWithAndWithoutWorkers) {
  Verdict v = WithPerf();
  auto back = VerdictFromWire(VerdictToWire(v));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, v);
  auto omitted = VerdictFromWire(VerdictToWire(v, WireWorkers::kOmit), v.workers);
  ASSERT_TRUE(omitted.ok()) << omitted.error().message;
  EXPECT_EQ(*omitted, v);
}

TEST(PerfWire, RefusesARankThatIsNotAWorker) {
  Verdict v = WithPerf();
  std::string wire = VerdictToWire(v);
  const std::string from = R"({"figures":{"allreduce":1010,"gemm":9000},"rank":2})";
  ASSERT_NE(wire.find(from), std::string::npos) << wire;
  wire.replace(wire.find(from), from.size(), R"({"figures":{"allreduce":1010,"gemm":9000},"rank":9})");
  auto back = VerdictFromWire(wire);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().message.find("rank 9 is not a worker"), std::string::npos) << back.error().message;
}

TEST(PerfReport, TextNamesTheWorkerAndTheFigure) {
  Verdict v = WithPerf();
  EXPECT_EQ(v.ExitCode(), kPerfExitCode);
  const std::string text = RenderText(v);
  EXPECT_NE(text.find("fleet check: SLOW: worker 1 (gemm) below 50% of the median"), std::string::npos) << text;
  EXPECT_NE(text.find("worker 1 (rank 2): gemm 9.0 GFLOP/s, 31% of the median 29.0: below 50%"), std::string::npos)
      << text;
  EXPECT_NE(text.find("FAILED (exit 7)"), std::string::npos) << text;
  oci::Json j = RenderJson(v);
  EXPECT_EQ(j["perf"]["workers"].size(), 3u);
  EXPECT_EQ(j["perf"]["flags"][0]["name"], "worker 1");
  EXPECT_DOUBLE_EQ(j["perf"]["workers"][2]["gemm"].get<double>(), 9.0);
}

// The step end to end: 4 workers as threads, one host (they take turns), tiny sizes.
TEST(PerfGather, EveryWorkerGetsEveryFigure) {
  auto server = trainer::TcpStoreServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(server.ok());
  const int port = (*server)->port();
  server->reset();
  GatherOptions o;
  o.timeout = std::chrono::seconds(20);
  o.perf.enabled = true;
  o.perf.threshold_permille = 1;  // timings are not what this test checks
  o.perf.gemm = {64, 64, 64, std::chrono::milliseconds(5), 1, 2};
  o.perf.allreduce.bytes = 64 << 10;
  o.perf.allreduce.iterations = 2;
  Fingerprint fp;
  fp.fields = {{"nccl", "2.28.9"}};
  const int n = 4;
  std::vector<std::optional<Result<Verdict>>> out(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      auto cluster = trainer::ClusterFromFlags(r, n, "127.0.0.1:" + std::to_string(port), "");
      ASSERT_TRUE(cluster.ok());
      out[static_cast<size_t>(r)] = GatherVerdict(*cluster, fp, o);
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    ASSERT_TRUE(out[static_cast<size_t>(r)].has_value());
    const auto& v = *out[static_cast<size_t>(r)];
    ASSERT_TRUE(v.ok()) << v.error().message;
    EXPECT_TRUE(v->perf.ran);
    EXPECT_TRUE(v->perf.skipped.empty()) << v->perf.skipped;
    ASSERT_EQ(v->perf.rows.size(), 4u) << RenderText(*v);
    for (const auto& [rank, f] : v->perf.rows) {
      EXPECT_TRUE(f.error.empty()) << rank << ": " << f.error;
      EXPECT_GT(f.milli.at(kPerfGemm), 0);
      EXPECT_GT(f.milli.at(kPerfAllreduce), 0);
    }
    EXPECT_EQ(v->perf, (*out[0])->perf);
  }
}

}  // namespace
}  // namespace imgtool::fleet
