#include "fleet/compare.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>

#include "oci/digest.h"

namespace imgtool::fleet {
namespace {

const std::string kImage = "sha256:2969e481aba0c28ad9d8b93c8d03b06e88dde734f0df2be438ff549374728747";
const std::string kNcclLib = "sha256:1c8618b866734cbdd5401715d6178be763ece283b7f808ecf86dedab211162c1";
const std::string kCudartLib = "sha256:96c42e418cec19054186b9429c321603cc190bf26a18104e19408117a2a817b0";
// sha256 of testdata/stack.json, as the probe reports /etc/imgtool/stack.json.
const std::string kStackJson = "sha256:dec5a7589d120b501e811aa09032a871dd9e7a1d384efef4633e45b94ed72559";

std::vector<WorkerId> Workers(int n) {
  std::vector<WorkerId> out;
  for (int r = 0; r < n; ++r) {
    out.push_back({r, "worker " + std::to_string(r), "10.0.0." + std::to_string(r + 1) + ":2222"});
  }
  return out;
}

// What the probe reports on a healthy node of the golden image (testdata/stack.json).
Fingerprint Node(int rank) {
  Fingerprint fp;
  fp.fields = {{"image.digest", kImage},
               {"image.stack_json", kStackJson},
               {"driver.version", "580.95.05"},
               {"cuda.runtime", "13.0"},
               {"cublas", "13.1.0"},
               {"cudnn", "9.19.0"},
               {"nccl", "2.28.9"},
               {"gpu.model", "NVIDIA H200"},
               {"gpu.count", "8"},
               {"lib.libnccl.so.2", kNcclLib},
               {"lib.libcudart.so.13", kCudartLib},
               {"env.NCCL_DEBUG", "WARN"}};
  fp.node = {{"host.name", "node-" + std::to_string(rank)}};
  return fp;
}

std::vector<Fingerprint> Fleet(int n) {
  std::vector<Fingerprint> out;
  for (int r = 0; r < n; ++r) out.push_back(Node(r));
  return out;
}

// As the gather builds it: each worker's digest under `ignore`, one fingerprint per digest.
CompareInput Input(const std::vector<Fingerprint>& fps, const std::vector<std::string>& ignore = {}) {
  CompareInput in;
  in.workers = Workers(static_cast<int>(fps.size()));
  in.ignore = ignore;
  for (size_t r = 0; r < fps.size(); ++r) {
    std::string d = FingerprintDigest(fps[r], ignore);
    in.digests[static_cast<int>(r)] = d;
    in.full.emplace(d, fps[r]);
  }
  return in;
}

Verdict CompareOk(const CompareInput& in) {
  auto v = Compare(in);
  EXPECT_TRUE(v.ok()) << v.error().message;
  return v.ok() ? *v : Verdict{};
}

// The folder comes from CMake, not __FILE__: a build that maps source paths (ccache's
// base dir, -ffile-prefix-map) makes __FILE__ relative to somewhere else.
std::string ReadTestdata(const std::string& name) {
  std::ifstream in(std::string(IMGTOOL_FLEET_TESTDATA) + "/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool NoTrailingSpaces(const std::string& text) {
  return text.find(" \n") == std::string::npos && (text.empty() || text.back() == '\n');
}

// ---- Compare -------------------------------------------------------------------------

TEST(CompareTest, IdenticalWorkersPass) {
  Verdict v = CompareOk(Input(Fleet(4)));  // node fields (host names) differ: never compared
  EXPECT_TRUE(v.ok());
  EXPECT_EQ(v.ExitCode(), 0);
  EXPECT_TRUE(v.diffs.empty());
  EXPECT_TRUE(v.missing.empty());
  std::string digest = FingerprintDigest(Node(0), {});
  EXPECT_EQ(v.notes.at("fingerprint"), digest);
  EXPECT_EQ(v.Summary(), "fleet check: OK: 4 of 4 workers match (fingerprint " + digest.substr(0, 19) + ")");
  EXPECT_EQ(RenderText(v), "fleet check: OK: 4 of 4 workers match (fingerprint " + digest.substr(0, 19) +
                               ")\n\nfingerprint: " + digest + "\n\nOK\n");
}

TEST(CompareTest, OneWorkerWithAnotherNccl) {
  auto fps = Fleet(4);
  fps[1].fields["nccl"] = "2.19.3";
  Verdict v = CompareOk(Input(fps));
  ASSERT_EQ(v.diffs.size(), 1u);
  EXPECT_EQ(v.diffs[0].field, "nccl");
  EXPECT_EQ(v.diffs[0].groups, (std::vector<ValueGroup>{{"2.28.9", {0, 2, 3}}, {"2.19.3", {1}}}));
  EXPECT_FALSE(v.diffs[0].expected);
  EXPECT_TRUE(v.suspects.empty());
  EXPECT_EQ(v.ExitCode(), 1);
  EXPECT_EQ(v.Summary(), "fleet check: MISMATCH: 1 field differs (nccl); worker 1 differs from the majority");
}

TEST(CompareTest, EnvVarOnOneWorkerOnlyIsAnAbsentGroup) {
  auto fps = Fleet(4);
  fps[2].fields["env.NCCL_ALGO"] = "Ring";
  Verdict v = CompareOk(Input(fps));
  ASSERT_EQ(v.diffs.size(), 1u);
  EXPECT_EQ(v.diffs[0].field, "env.NCCL_ALGO");
  EXPECT_EQ(v.diffs[0].groups, (std::vector<ValueGroup>{{"(absent)", {0, 1, 3}}, {"Ring", {2}}}));
}

TEST(CompareTest, FieldsComeInTheFingerprintsOrder) {
  auto fps = Fleet(4);
  fps[1].fields["nccl"] = "2.19.3";
  fps[1].fields["env.NCCL_ALGO"] = "Ring";
  fps[1].fields["lib.libnccl.so.2"] = "sha256:" + std::string(64, '0');
  fps[1].fields["gpu.model"] = "NVIDIA H100";
  Verdict v = CompareOk(Input(fps));
  std::vector<std::string> fields;
  for (const auto& d : v.diffs) fields.push_back(d.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"nccl", "gpu.model", "lib.libnccl.so.2", "env.NCCL_ALGO"}));
  EXPECT_EQ(
      v.Summary(),
      "fleet check: MISMATCH: 4 fields differ (nccl, gpu.model, lib.libnccl.so.2, env.NCCL_ALGO); worker 1 differs "
      "from the majority");
}

TEST(CompareTest, ImageDigestDiffers) {
  auto fps = Fleet(4);
  fps[2].fields["image.digest"] = "sha256:" + std::string(64, 'b');
  fps[3].fields["image.digest"] = "sha256:" + std::string(64, 'b');
  Verdict v = CompareOk(Input(fps));
  ASSERT_EQ(v.diffs.size(), 1u);
  EXPECT_EQ(v.diffs[0].field, "image.digest");
  EXPECT_EQ(
      v.diffs[0].groups,
      (std::vector<ValueGroup>{{kImage, {0, 1}}, {"sha256:" + std::string(64, 'b'), {2, 3}}}));  // tie: rank 0 first
  EXPECT_EQ(v.Summary(),
            "fleet check: MISMATCH: 1 field differs (image.digest); no majority for image.digest (2 and 2 "
            "workers)");
  fps[1].fields["image.digest"] = "sha256:" + std::string(64, 'b');
  v = CompareOk(Input(fps));
  EXPECT_EQ(v.diffs[0].groups, (std::vector<ValueGroup>{{"sha256:" + std::string(64, 'b'), {1, 2, 3}}, {kImage, {0}}}));
  EXPECT_EQ(v.Summary(), "fleet check: MISMATCH: 1 field differs (image.digest); worker 0 differs from the majority");

  // Three images, two of them on two workers each.
  fps = Fleet(5);
  fps[1].fields["image.digest"] = fps[2].fields["image.digest"] = "sha256:" + std::string(64, 'b');
  fps[4].fields["image.digest"] = "sha256:" + std::string(64, 'c');
  EXPECT_EQ(CompareOk(Input(fps)).Summary(),
            "fleet check: MISMATCH: 1 field differs (image.digest); no majority for image.digest (2, 2 and 1 workers)");
  for (int r = 5; r < 9; ++r) {
    fps.push_back(Node(r));
    fps.back().fields["image.digest"] = "sha256:" + std::string(64, static_cast<char>('0' + r));
  }
  EXPECT_EQ(
      CompareOk(Input(fps)).Summary(),
      "fleet check: MISMATCH: 1 field differs (image.digest); no majority for image.digest (7 groups of at most 2 "
      "workers)");
}

TEST(CompareTest, MissingWorkersExitThree) {
  CompareInput in = Input(Fleet(4));
  in.digests.erase(1);
  in.digests.erase(3);
  Verdict v = CompareOk(in);
  EXPECT_EQ(v.missing, (std::vector<int>{1, 3}));
  EXPECT_EQ(v.ExitCode(), 3);
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.Summary(), "fleet check: 2 of 4 arrived; missing: worker 1 (10.0.0.2:2222), worker 3 (10.0.0.4:2222)");

  // Missing takes precedence over a mismatch among those who came.
  auto fps = Fleet(4);
  fps[1].fields["nccl"] = "2.19.3";
  in = Input(fps);
  in.digests.erase(3);
  v = CompareOk(in);
  EXPECT_EQ(v.ExitCode(), 3);
  EXPECT_EQ(v.Summary(), "fleet check: 3 of 4 arrived; missing: worker 3 (10.0.0.4:2222); 1 field differs (nccl)");
  EXPECT_EQ(v.diffs[0].groups, (std::vector<ValueGroup>{{"2.28.9", {0, 2}}, {"2.19.3", {1}}}));

  in.digests.clear();
  v = CompareOk(in);
  EXPECT_EQ(v.Summary(), "fleet check: 0 of 4 arrived; missing: worker 0-3");
  EXPECT_EQ(v.ExitCode(), 3);
}

TEST(CompareTest, IgnoreHidesAField) {
  auto fps = Fleet(4);
  fps[1].fields["env.NCCL_DEBUG"] = "INFO";
  fps[3].fields["env.NCCL_DEBUG_SUBSYS"] = "ALL";
  EXPECT_EQ(CompareOk(Input(fps)).diffs.size(), 2u);
  EXPECT_TRUE(CompareOk(Input(fps, {"env.NCCL_DEBUG", "env.NCCL_DEBUG_SUBSYS"})).ok());
  EXPECT_TRUE(CompareOk(Input(fps, {"env.NCCL_DEBUG*"})).ok());
  Verdict v = CompareOk(Input(fps, {"env.NCCL_DEBUG"}));
  ASSERT_EQ(v.diffs.size(), 1u);
  EXPECT_EQ(v.diffs[0].field, "env.NCCL_DEBUG_SUBSYS");
}

TEST(CompareTest, DifferentIgnoreListsFailClosed) {
  // Worker 1 ran with --ignore 'env.*', the others without: same fields, other digests.
  auto fps = Fleet(4);
  CompareInput in = Input(fps);
  std::string odd = FingerprintDigest(fps[1], {"env.*"});
  in.digests[1] = odd;
  in.full.emplace(odd, fps[1]);
  Verdict v = CompareOk(in);
  ASSERT_EQ(v.diffs.size(), 1u);
  EXPECT_EQ(v.diffs[0].field, "fingerprint");
  EXPECT_EQ(v.diffs[0].groups, (std::vector<ValueGroup>{{FingerprintDigest(fps[0], {}), {0, 2, 3}}, {odd, {1}}}));
  EXPECT_EQ(v.ExitCode(), 1);
  EXPECT_EQ(v.Summary(), "fleet check: MISMATCH: 1 field differs (fingerprint); worker 1 differs from the majority");
  EXPECT_EQ(v.notes.at("hint"),
            "the digests differ but no compared field does: do all workers run with the same --ignore?");

  // Only the chief ignores the field that differs: the workers' digests still differ.
  fps[1].fields["env.NCCL_DEBUG"] = "INFO";
  in = Input(fps);
  in.ignore = {"env.NCCL_DEBUG"};
  v = CompareOk(in);
  ASSERT_EQ(v.diffs.size(), 1u);
  EXPECT_EQ(v.diffs[0].field, "fingerprint");
}

TEST(CompareTest, ProtocolErrorsAreInternal) {
  CompareInput in = Input(Fleet(2));
  in.full.clear();
  auto r = Compare(in);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kInternal);
  EXPECT_EQ(r.error().message, "compare: no fingerprint for " + FingerprintDigest(Node(0), {}) + " (of rank 0)");
  in = Input(Fleet(2));
  in.digests[7] = in.digests[0];
  EXPECT_EQ(Compare(in).error().message, "compare: rank 7 sent a fingerprint but is not a worker");
}

TEST(CompareTest, ExpectedValueMatchesVersionsAsDottedPrefixes) {
  EXPECT_TRUE(ExpectedValueMatches("nccl", "2.28.9", "2.28.9"));
  EXPECT_TRUE(ExpectedValueMatches("nccl", "2.28", "2.28.9"));           // a pin
  EXPECT_TRUE(ExpectedValueMatches("cuda.runtime", "13.0.96", "13.0"));  // package vs runtime API
  EXPECT_TRUE(ExpectedValueMatches("cudnn", "9.19.0.56", "9.19.0"));
  EXPECT_TRUE(ExpectedValueMatches("driver.version", "580", "580.95.05"));
  EXPECT_FALSE(ExpectedValueMatches("nccl", "2.2", "2.28.9"));  // not at a dot
  EXPECT_FALSE(ExpectedValueMatches("nccl", "2.28.9", "2.19.3"));
  EXPECT_FALSE(ExpectedValueMatches("nccl", "2.28.9", "absent"));
  EXPECT_FALSE(ExpectedValueMatches("nccl", "", "2.28.9"));
  EXPECT_FALSE(ExpectedValueMatches("image.digest", "sha256:ab", "sha256:ab.c"));  // not a version: equal only
  EXPECT_FALSE(ExpectedValueMatches("lib.libnccl.so.2", "sha256:1", "sha256:1.2"));
  EXPECT_TRUE(ExpectedValueMatches("lib.libnccl.so.2", kNcclLib, kNcclLib));
}

TEST(CompareTest, ExpectMismatch) {
  auto fps = Fleet(4);
  fps[1].fields["nccl"] = "2.19.3";
  CompareInput in = Input(fps);
  in.expected = {{"nccl", "2.28"},
                 {"cuda.runtime", "13.0.96"},
                 {"lib.libcudnn_adv.so.9", "sha256:" + std::string(64, 'c')},  // not loaded by the probe
                 {"image.digest", kImage}};
  Verdict v = CompareOk(in);
  ASSERT_EQ(v.diffs.size(), 1u);
  EXPECT_EQ(v.diffs[0].field, "nccl");
  EXPECT_EQ(v.diffs[0].expected, "2.28");
  EXPECT_EQ(v.diffs[0].groups, (std::vector<ValueGroup>{{"2.28.9", {0, 2, 3}}, {"2.19.3", {1}}}));

  // Every worker agrees, on the wrong thing.
  in = Input(Fleet(4));
  in.expected = {{"nccl", "2.27"}, {"lib.libnccl.so.2", "sha256:" + std::string(64, 'd')}, {"cuda.runtime", "13.0"}};
  v = CompareOk(in);
  ASSERT_EQ(v.diffs.size(), 2u);
  EXPECT_EQ(v.diffs[0].field, "nccl");
  EXPECT_EQ(v.diffs[0].groups, (std::vector<ValueGroup>{{"2.28.9", {0, 1, 2, 3}}}));
  EXPECT_EQ(v.diffs[1].field, "lib.libnccl.so.2");
  EXPECT_EQ(v.ExitCode(), 1);
  EXPECT_EQ(v.Summary(),
            "fleet check: MISMATCH: 2 fields differ (nccl, lib.libnccl.so.2); all 4 workers differ from --expect");

  // An expected field nobody reports is absent everywhere: a mismatch (but lib.*, above).
  in.expected = {{"image.digest", kImage}, {"cudnn", "9.19"}};
  EXPECT_TRUE(CompareOk(in).ok());
  in.expected = {{"cuda.driver_api", "13.0"}};
  v = CompareOk(in);
  ASSERT_EQ(v.diffs.size(), 1u);
  EXPECT_EQ(v.diffs[0].groups, (std::vector<ValueGroup>{{"(absent)", {0, 1, 2, 3}}}));
  in.expected = {{"gpu.model", "NVIDIA B200"}};
  in.ignore = {"gpu.*"};  // --ignore wins over --expect
  in.digests.clear();
  in.full.clear();
  for (int r = 0; r < 4; ++r) {
    in.digests[r] = FingerprintDigest(Node(r), in.ignore);
    in.full.emplace(in.digests[r], Node(r));
  }
  EXPECT_TRUE(CompareOk(in).ok());
}

TEST(CompareTest, GoldenRunSuspectsWithAMajority) {
  auto fps = Fleet(4);
  for (auto& fp : fps) fp.fields["golden_run.weights"] = "sha256:" + std::string(64, 'e');
  fps[3].fields["golden_run.weights"] = "sha256:" + std::string(64, 'f');
  Verdict v = CompareOk(Input(fps));
  EXPECT_EQ(v.suspects, (std::vector<int>{3}));
  EXPECT_EQ(v.ExitCode(), 1);
  EXPECT_EQ(
      v.Summary(),
      "fleet check: MISMATCH: 1 field differs (golden_run.weights); worker 3 differs from the majority; golden run "
      "suspects: worker 3");
}

TEST(CompareTest, GoldenRunTieMakesEveryWorkerASuspect) {
  auto fps = Fleet(4);
  for (int r = 0; r < 4; ++r) fps[r].fields["golden_run.weights"] = "sha256:" + std::string(64, r < 2 ? 'e' : 'f');
  Verdict v = CompareOk(Input(fps));
  EXPECT_EQ(v.suspects, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(v.Summary(),
            "fleet check: MISMATCH: 1 field differs (golden_run.weights); no majority for golden_run.weights (2 and 2 "
            "workers); golden run suspects: worker 0-3");
  // Other stack differences do not make suspects; golden_run comes last.
  fps[2].fields["nccl"] = "2.19.3";
  fps[3].fields["nccl"] = "2.19.3";
  v = CompareOk(Input(fps));
  ASSERT_EQ(v.diffs.size(), 2u);
  EXPECT_EQ(v.diffs[1].field, "golden_run.weights");
  EXPECT_EQ(v.suspects, (std::vector<int>{0, 1, 2, 3}));
}

// ---- RenderText / RenderJson ---------------------------------------------------------

TEST(RenderTest, MismatchTable) {
  auto fps = Fleet(4);
  fps[1].fields["nccl"] = "2.19.3";
  fps[1].fields["env.NCCL_ALGO"] = "Ring";
  Verdict v = CompareOk(Input(fps));
  std::string text = RenderText(v);
  EXPECT_EQ(text,
            "fleet check: MISMATCH: 2 fields differ (nccl, env.NCCL_ALGO); worker 1 differs from the majority\n"
            "\n"
            "FIELD          VALUE     WORKERS\n"
            "nccl           2.28.9    worker 0, worker 2, worker 3\n"
            "               2.19.3    worker 1\n"
            "env.NCCL_ALGO  (absent)  worker 0, worker 2, worker 3\n"
            "               Ring      worker 1\n"
            "\n"
            "FAILED (exit 1)\n");
  EXPECT_TRUE(NoTrailingSpaces(text));
}

TEST(RenderTest, ExpectedRowsSuspectsAndMissing) {
  auto fps = Fleet(5);
  fps[1].fields["nccl"] = "2.19.3";
  for (auto& fp : fps) fp.fields["golden_run.weights"] = "sha256:" + std::string(64, 'e');
  fps[1].fields["golden_run.weights"] = "sha256:" + std::string(64, 'f');
  CompareInput in = Input(fps);
  in.expected = {{"nccl", "2.28"}};
  in.digests.erase(4);
  Verdict v = CompareOk(in);
  v.notes["golden_run.seconds"] = "0.41";
  // Columns: the longest field (golden_run.weights, 18) and value (a digest, 71), then 2.
  auto row = [](const std::string& field, const std::string& value, const std::string& workers) {
    return field + std::string(20 - field.size(), ' ') + value + std::string(73 - value.size(), ' ') + workers + "\n";
  };
  EXPECT_EQ(
      RenderText(v),
      "fleet check: 4 of 5 arrived; missing: worker 4 (10.0.0.5:2222); 2 fields differ (nccl, golden_run.weights)\n"
      "\n" +
          row("FIELD", "VALUE", "WORKERS") + row("nccl", "2.28", "(expected)") +
          row("", "2.28.9", "worker 0, worker 2, worker 3") + row("", "2.19.3", "worker 1") +
          row("golden_run.weights", "sha256:" + std::string(64, 'e'), "worker 0, worker 2, worker 3") +
          row("", "sha256:" + std::string(64, 'f'), "worker 1") +
          "\n"
          "missing: worker 4 (10.0.0.5:2222)\n"
          "golden run suspects: worker 1\n"
          "golden_run.seconds: 0.41\n"
          "\n"
          "FAILED (exit 3)\n");
}

TEST(RenderTest, CompressesRangesFor256Workers) {
  auto fps = Fleet(256);
  fps[100].fields["nccl"] = "2.19.3";
  Verdict v = CompareOk(Input(fps));
  EXPECT_EQ(RenderText(v),
            "fleet check: MISMATCH: 1 field differs (nccl); worker 100 differs from the majority\n"
            "\n"
            "FIELD  VALUE   WORKERS\n"
            "nccl   2.28.9  worker 0-99, worker 101-255\n"
            "       2.19.3  worker 100\n"
            "\n"
            "FAILED (exit 1)\n");
}

TEST(RenderTest, LongListsAreCutIn10000Workers) {
  // Every odd worker on another NCCL: nothing to compress, so cells and the summary cut.
  CompareInput in;
  in.workers = Workers(10000);
  Fingerprint even = Node(0), odd = Node(1);
  odd.fields["nccl"] = "2.19.3";
  in.full = {{FingerprintDigest(even, {}), even}, {FingerprintDigest(odd, {}), odd}};
  for (int r = 0; r < 10000; ++r) in.digests[r] = FingerprintDigest(r % 2 ? odd : even, {});
  in.digests.erase(9999);
  Verdict v = CompareOk(in);
  EXPECT_EQ(v.Summary(),
            "fleet check: 9999 of 10000 arrived; missing: worker 9999 (10.0.0.10000:2222); 1 field "
            "differs (nccl)");
  in.digests[9999] = FingerprintDigest(odd, {});
  v = CompareOk(in);
  EXPECT_EQ(v.Summary(), "fleet check: MISMATCH: 1 field differs (nccl); no majority for nccl (5000 and 5000 workers)");
  std::string text = RenderText(v);
  EXPECT_NE(text.find("nccl   2.28.9  worker 0, worker 2, "), std::string::npos) << text.substr(0, 300);
  EXPECT_NE(text.find(", worker 126 and 4936 more\n"), std::string::npos);
  EXPECT_NE(text.find(", worker 127 and 4936 more\n"), std::string::npos);
  EXPECT_LT(text.size(), 2000u);
  // Outliers in the summary are cut too.
  in.digests.clear();
  for (int r = 0; r < 10000; ++r) in.digests[r] = FingerprintDigest(r % 3 == 1 ? odd : even, {});
  EXPECT_EQ(CompareOk(in).Summary(),
            "fleet check: MISMATCH: 1 field differs (nccl); worker 1, worker 4, worker 7, worker 10 "
            "and 3329 more differ from the majority");
}

TEST(RenderTest, MissingRunsAndUnnamedWorkers) {
  Verdict v;
  v.expected_workers = 8;
  v.workers = Workers(8);
  v.workers[7].name = "";  // no name: called by rank
  v.missing = {1, 2, 3, 4, 7};
  EXPECT_EQ(v.Summary(), "fleet check: 3 of 8 arrived; missing: worker 1-4, rank 7 (10.0.0.8:2222)");
  EXPECT_EQ(RenderText(v),
            "fleet check: 3 of 8 arrived; missing: worker 1-4, rank 7 (10.0.0.8:2222)\n"
            "\n"
            "missing: worker 1-4, rank 7 (10.0.0.8:2222)\n"
            "\n"
            "FAILED (exit 3)\n");
}

TEST(RenderTest, HostileValuesCannotDriveTheTerminal) {
  auto fps = Fleet(3);
  fps[2].fields["env.NCCL_ALGO"] = "\x1b]0;owned\x07\xc2\x9b";
  fps[1].fields["env.NCCL_SOCKET_IFNAME"] = std::string(5000, 'x');
  Verdict v = CompareOk(Input(fps));
  std::string text = RenderText(v);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("  \\x1b]0;owned\\x07\\u009b   "), std::string::npos) << text;
  // A long value is cut to 64 characters with its size and a hash to tell values apart.
  EXPECT_NE(text.find(std::string(64, 'x') + "... (5000 bytes, " +
                      oci::Digest::Of(std::string(5000, 'x')).hex().substr(0, 12) + ")  worker 1\n"),
            std::string::npos)
      << text;
  EXPECT_TRUE(NoTrailingSpaces(text));
}

TEST(RenderTest, Json) {
  auto fps = Fleet(4);
  fps[1].fields["nccl"] = "2.19.3";
  CompareInput in = Input(fps);
  in.expected = {{"nccl", "2.28.9"}};
  in.digests.erase(3);
  oci::Json j = RenderJson(CompareOk(in));
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["exit_code"], 3);
  EXPECT_EQ(j["expected_workers"], 4);
  EXPECT_EQ(j["arrived"], 3);
  EXPECT_EQ(j["missing"].dump(), R"([{"address":"10.0.0.4:2222","name":"worker 3","rank":3}])");
  EXPECT_EQ(
      j["diffs"].dump(),
      R"([{"expected":"2.28.9","field":"nccl","groups":[{"ranks":[0,2],"value":"2.28.9","workers":["worker 0","worker 2"]},)"
      R"({"ranks":[1],"value":"2.19.3","workers":["worker 1"]}],"scope":"fleet"}])");
  EXPECT_EQ(j["suspects"].dump(), "[]");
  EXPECT_EQ(j["summary"], "fleet check: 3 of 4 arrived; missing: worker 3 (10.0.0.4:2222); 1 field differs (nccl)");
  EXPECT_TRUE(j["notes"].is_object());
}

// ---- The wire ------------------------------------------------------------------------

Verdict Everything() {
  auto fps = Fleet(6);
  fps[1].fields["nccl"] = "2.19.3";
  fps[1].fields["golden_run.weights"] = "sha256:" + std::string(64, 'f');
  for (int r : {0, 2, 3}) fps[r].fields["golden_run.weights"] = "sha256:" + std::string(64, 'e');
  fps[2].fields["env.NCCL_ALGO"] = "Ring\n\"quoted\" \xc3\xa9";
  CompareInput in = Input(fps);
  in.expected = {{"nccl", "2.28"}};
  in.digests.erase(5);
  Verdict v = CompareOk(in);
  v.notes["golden_run.seconds"] = "0.41";
  v.workers[4].address = "";
  return v;
}

TEST(WireTest, ExactRoundTrip) {
  Verdict v = Everything();
  ASSERT_EQ(v.missing, (std::vector<int>{5}));
  ASSERT_EQ(v.suspects, (std::vector<int>{1, 4}));
  ASSERT_EQ(v.diffs.size(), 3u);
  auto back = VerdictFromWire(VerdictToWire(v));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, v);
  EXPECT_EQ(RenderText(*back), RenderText(v));

  // Without the worker list, each worker fills in its own.
  std::string compact = VerdictToWire(v, WireWorkers::kOmit);
  EXPECT_EQ(compact.find("10.0.0.1:2222"), std::string::npos);
  back = VerdictFromWire(compact, v.workers);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, v);

  Verdict ok = CompareOk(Input(Fleet(3)));
  back = VerdictFromWire(VerdictToWire(ok));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, ok);
}

TEST(WireTest, RankListsAreRunsSoTenThousandWorkersStaySmall) {
  auto fps = Fleet(2);
  fps[1].fields["nccl"] = "2.19.3";
  CompareInput in;
  in.workers = Workers(10000);
  in.full = {{FingerprintDigest(fps[0], {}), fps[0]}, {FingerprintDigest(fps[1], {}), fps[1]}};
  for (int r = 0; r < 10000; ++r) in.digests[r] = FingerprintDigest(fps[r == 4321 ? 1 : 0], {});
  Verdict v = CompareOk(in);
  std::string wire = VerdictToWire(v, WireWorkers::kOmit);
  EXPECT_EQ(wire, R"({"diffs":[{"field":"nccl","groups":[{"ranks":[[0,4320],[4322,9999]],"value":"2.28.9"},)"
                  R"({"ranks":[[4321,4321]],"value":"2.19.3"}]}],"expected_workers":10000,"missing":[],"notes":{},)"
                  R"("suspects":[],"version":1})");
  auto back = VerdictFromWire(wire, in.workers);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, v);
}

// A valid two-worker verdict as JSON, to break one piece at a time.
oci::Json WireBase() {
  return oci::Json::parse(R"({"version":1,"expected_workers":2,
    "workers":[{"rank":0,"name":"worker 0","address":""},{"rank":1,"name":"worker 1","address":""}],
    "missing":[],"diffs":[{"field":"nccl","groups":[{"value":"a","ranks":[[0,0]]},{"value":"b","ranks":[[1,1]]}]}],
    "suspects":[],"notes":{}})");
}

std::string WireError(const std::function<void(oci::Json&)>& edit, const std::vector<WorkerId>& workers = {}) {
  oci::Json j = WireBase();
  edit(j);
  auto r = VerdictFromWire(j.dump(), workers);
  return r.ok() ? "(ok)" : r.error().message;
}

TEST(WireTest, HostileInputGetsAClearError) {
  EXPECT_EQ(WireError([](oci::Json&) {}), "(ok)");
  EXPECT_EQ(VerdictFromWire("").error().message.rfind("verdict: malformed JSON at byte ", 0), 0u);
  EXPECT_EQ(VerdictFromWire("[]").error().message, "$: not an object");
  EXPECT_EQ(VerdictFromWire(R"({"version":1,"version":1})").error().message, "verdict: duplicate key \"version\"");
  EXPECT_EQ(VerdictFromWire(std::string(kMaxWireBytes + 1, ' ')).error().message,
            "verdict: 67108865 bytes, more than the limit of 67108864");
  EXPECT_EQ(WireError([](oci::Json& j) { j["evil"] = 1; }), "$.evil: unknown key");
  EXPECT_EQ(WireError([](oci::Json& j) { j.erase("notes"); }), "$.notes: missing");
  EXPECT_EQ(WireError([](oci::Json& j) { j["version"] = 2; }),
            "$.version: version 2, this imgtool reads 1 (chief and workers run different imgtools?)");
  EXPECT_EQ(WireError([](oci::Json& j) { j["expected_workers"] = 3; }),
            "$.expected_workers: 3 but 2 workers are listed");
  EXPECT_EQ(WireError([](oci::Json& j) { j["expected_workers"] = -1; }),
            "$.expected_workers: out of range [0, 1048576]");
  EXPECT_EQ(WireError([](oci::Json& j) { j["expected_workers"] = 18446744073709551615u; }),
            "$.expected_workers: out of range [0, 1048576]");
  EXPECT_EQ(WireError([](oci::Json& j) { j["expected_workers"] = 2.0; }), "$.expected_workers: not an integer");
  EXPECT_EQ(WireError([](oci::Json& j) { j["workers"][1]["rank"] = 0; }),
            "$.workers[1].rank: ranks out of order or repeated");
  EXPECT_EQ(WireError([](oci::Json& j) { j["workers"][0]["name"] = std::string(300, 'n'); }),
            "$.workers[0].name: 300 bytes, more than the limit of 256");
  EXPECT_EQ(WireError([](oci::Json& j) { j["workers"][0]["shell"] = "rm -rf /"; }), "$.workers[0].shell: unknown key");
  EXPECT_EQ(WireError([](oci::Json& j) { j["missing"] = {1}; }), "$.missing[0]: not a [first, last] pair");
  EXPECT_EQ(WireError([](oci::Json& j) { j["missing"] = {{1, 0}}; }), "$.missing[0]: first rank 1 after last 0");
  EXPECT_EQ(WireError([](oci::Json& j) { j["missing"] = {{0, 5}}; }), "$.missing[0]: rank 2 is not a worker");
  EXPECT_EQ(WireError([](oci::Json& j) {
              j["missing"] = {{0, 2147483648u}};
            }),
            "$.missing[0][1]: out of range [0, 1048575]");
  EXPECT_EQ(WireError([](oci::Json& j) {
              j["suspects"] = {{1, 1}, {0, 0}};
            }),
            "$.suspects[1]: ranks out of order or repeated");
  EXPECT_EQ(WireError([](oci::Json& j) {
              j["missing"] = {{1, 1}};
            }),
            "$.diffs[0].groups[1].ranks: rank 1 is missing yet has a value");
  EXPECT_EQ(WireError([](oci::Json& j) {
              j["diffs"][0]["groups"][0]["ranks"] = {{0, 1}};
            }),
            "$.diffs[0].groups[1].ranks: rank 1 is in two groups");
  EXPECT_EQ(WireError([](oci::Json& j) { j["diffs"][0]["groups"][0]["ranks"] = oci::Json::array(); }),
            "$.diffs[0].groups[0].ranks: empty");
  EXPECT_EQ(WireError([](oci::Json& j) { j["diffs"][0]["groups"] = oci::Json::array(); }),
            "$.diffs[0].groups: not a non-empty array");
  EXPECT_EQ(WireError([](oci::Json& j) { j["diffs"][0]["groups"][0]["value"] = std::string(5000, 'v'); }),
            "$.diffs[0].groups[0].value: 5000 bytes, more than the limit of 4096");
  EXPECT_EQ(WireError([](oci::Json& j) { j["diffs"][0]["expected"] = 1; }), "$.diffs[0].expected: not a string");
  EXPECT_EQ(WireError([](oci::Json& j) {
              oci::Json d = j["diffs"][0];
              j["diffs"].push_back(d);
            }),
            "$.diffs[1].field: 'nccl' is listed twice");
  EXPECT_EQ(WireError([](oci::Json& j) { j["diffs"] = oci::Json::object(); }), "$.diffs: not an array");
  EXPECT_EQ(WireError([](oci::Json& j) { j["notes"]["k"] = 1; }), "$.notes.k: not a string");

  // Without workers: the receiver's own list, which must agree with the chief's count.
  EXPECT_EQ(WireError([](oci::Json& j) { j.erase("workers"); }),
            "$.workers: missing (the verdict was sent without workers; pass the cluster's)");
  EXPECT_EQ(WireError([](oci::Json& j) { j.erase("workers"); }, Workers(2)), "(ok)");
  auto r = VerdictFromWire(
      [] {
        oci::Json j = WireBase();
        j.erase("workers");
        return j.dump();
      }(),
      Workers(3));
  EXPECT_EQ(r.error().kind, ErrorKind::kIntegrity);
  EXPECT_EQ(r.error().message, "$.expected_workers: the chief counts 2 workers, this worker's cluster 3");
  auto other = Workers(2);
  other[1].address = "10.9.9.9:2222";
  r = VerdictFromWire(WireBase().dump(), other);
  EXPECT_EQ(r.error().kind, ErrorKind::kIntegrity);
  EXPECT_EQ(r.error().message, "$.workers: the chief's cluster differs from this worker's");
}

// ---- --expect ------------------------------------------------------------------------

std::string ExpectError(const std::string& text) {
  auto r = ExpectedFields(text);
  return r.ok() ? "(ok)" : r.error().message;
}

TEST(ExpectTest, FromARealStackJson) {
  // testdata/stack.json: /etc/imgtool/stack.json of an image `imgtool build` made from this
  // machine's installed CUDA runtime and NCCL wheels (pins cuda 13.0, nccl 2.28.9, driver
  // 580.95.05), extracted unchanged.
  std::string text = ReadTestdata("stack.json");
  ASSERT_FALSE(text.empty());
  auto fields = ExpectedFields(text);
  ASSERT_TRUE(fields.ok()) << fields.error().message;
  EXPECT_EQ(*fields, (std::map<std::string, std::string>{{"cuda.runtime", "13.0.96"},  // the package, not the pin
                                                         {"driver.version", "580.95.05"},
                                                         {"image.stack_json", kStackJson},
                                                         {"lib.libcudart.so.13", kCudartLib},
                                                         {"lib.libnccl.so.2", kNcclLib},
                                                         {"nccl", "2.28.9"}}));
  // Reformatted, it is no longer the file the image holds: no image.stack_json.
  auto pretty = ExpectedFields(oci::Json::parse(text).dump(2));
  ASSERT_TRUE(pretty.ok());
  EXPECT_EQ(pretty->count("image.stack_json"), 0u);
  EXPECT_EQ(pretty->size(), 5u);

  // The golden fleet passes; a node with its own libnccl fails on the hash and version.
  auto fps = Fleet(4);
  fps[3].fields["lib.libnccl.so.2"] = "sha256:" + std::string(64, '0');
  fps[3].fields["nccl"] = "2.19.3";
  CompareInput in = Input(fps);
  in.expected = *fields;
  Verdict v = CompareOk(in);
  ASSERT_EQ(v.diffs.size(), 2u);
  EXPECT_EQ(v.diffs[0].field, "nccl");
  EXPECT_EQ(v.diffs[1].field, "lib.libnccl.so.2");
  EXPECT_EQ(v.diffs[1].expected, kNcclLib);
  in = Input(Fleet(4));
  in.expected = *fields;
  EXPECT_TRUE(CompareOk(in).ok());
}

TEST(ExpectTest, FromABuildRecordAndBuildOutput) {
  // testdata/golden.build.json: the build record written beside that image.
  auto fields = ExpectedFields(ReadTestdata("golden.build.json"));
  ASSERT_TRUE(fields.ok()) << fields.error().message;
  EXPECT_EQ(*fields, (std::map<std::string, std::string>{{"image.digest", kImage}}));
  fields = ExpectedFields(R"({"config":"sha256:)" + std::string(64, '1') + R"(","digest":")" + kImage +
                          R"(","layers":[],"record":"out/img.build.json","reference":"oci:out/img:latest"})");
  ASSERT_TRUE(fields.ok()) << fields.error().message;
  EXPECT_EQ(*fields, (std::map<std::string, std::string>{{"image.digest", kImage}}));
  // A record that carries the stack adds it.
  oci::Json record = oci::Json::parse(ReadTestdata("golden.build.json"));
  record["stack"] = oci::Json::parse(ReadTestdata("stack.json"));
  fields = ExpectedFields(record.dump());
  ASSERT_TRUE(fields.ok()) << fields.error().message;
  EXPECT_EQ(fields->at("image.digest"), kImage);
  EXPECT_EQ(fields->at("nccl"), "2.28.9");
  EXPECT_EQ(fields->count("image.stack_json"), 0u);
}

// A multi-platform build's record and --json name the index: expected as image.index,
// which every worker of every platform shares (their image digests differ by platform).
TEST(ExpectTest, AnIndexBuildIsExpectedAsTheImageIndex) {
  const std::string index = "sha256:" + std::string(64, 'e');
  auto fields = ExpectedFields(R"({"recordVersion":1,"outputs":{"index":{"digest":")" + index +
                               R"(","mediaType":"application/vnd.oci.image.index.v1+json","size":9}},"images":[]})");
  ASSERT_TRUE(fields.ok()) << fields.error().message;
  EXPECT_EQ(*fields, (std::map<std::string, std::string>{{"image.index", index}}));
  fields = ExpectedFields(R"({"digest":")" + index +
                          R"(","mediaType":"application/vnd.oci.image.index.v1+json",)"
                          R"("images":[],"reference":"oci:out/img:latest"})");
  ASSERT_TRUE(fields.ok()) << fields.error().message;
  EXPECT_EQ(*fields, (std::map<std::string, std::string>{{"image.index", index}}));
  EXPECT_EQ(ExpectError(R"({"recordVersion":1,"outputs":{"index":{}}})"), "$.outputs.index.digest: missing");
}

TEST(ExpectTest, DebVersionsAndPlainPins) {
  auto fields = ExpectedFields(R"({"schemaVersion":1,"components":{
      "nccl":{"version":"2.28","package":"libnccl2","packageVersion":"1:2.28.9-1+cuda13.0"},
      "cudnn":{"version":"9.19.0"},"cublas":{"version":"13.1.0.3"}}})");
  ASSERT_TRUE(fields.ok()) << fields.error().message;
  EXPECT_EQ(*fields,
            (std::map<std::string, std::string>{{"nccl", "2.28.9"}, {"cudnn", "9.19.0"}, {"cublas", "13.1.0.3"}}));
}

TEST(ExpectTest, MalformedInputNamesThePath) {
  EXPECT_EQ(ExpectError("[]"), "$: not an object");
  EXPECT_EQ(ExpectError("{").rfind("stack.json or build record: malformed JSON at byte ", 0), 0u);
  EXPECT_EQ(ExpectError(R"({"name":"x"})"),
            "$: neither stack.json (components), a build record (outputs.manifest) nor `imgtool build --json` "
            "output (reference, digest)");
  EXPECT_EQ(ExpectError(R"({"schemaVersion":2,"components":{}})"), "$.schemaVersion: want 1");
  EXPECT_EQ(ExpectError(R"({"schemaVersion":1,"components":[]})"), "$.components: not an object");
  EXPECT_EQ(ExpectError(R"({"schemaVersion":1,"components":{"nccl":{"version":2}}})"),
            "$.components.nccl.version: not a non-empty string");
  EXPECT_EQ(ExpectError(R"({"schemaVersion":1,"components":{"nccl":{}}})"), "$.components.nccl.version: missing");
  EXPECT_EQ(ExpectError(R"({"schemaVersion":1,"components":{"rocm":{"version":"6"}}})"),
            "$.components.rocm: unknown component (this imgtool knows cuda, cublas, cudnn, nccl, driver)");
  EXPECT_EQ(
      ExpectError(
          R"({"schemaVersion":1,"components":{"nccl":{"version":"2","libraries":[{"path":"/l/x.so","sha256":"md5:1"}]}}})"),
      "$.components.nccl.libraries[0].sha256: digest 'md5:1': only sha256 digests are supported");
  EXPECT_EQ(ExpectError(R"({"schemaVersion":1,"components":{"nccl":{"version":"2","libraries":{}}}})"),
            "$.components.nccl.libraries: not an array");
  std::string a = "sha256:" + std::string(64, 'a'), b = "sha256:" + std::string(64, 'b');
  EXPECT_EQ(ExpectError(
                R"({"schemaVersion":1,"components":{"nccl":{"version":"2","libraries":[{"path":"/a/x.so","sha256":")" +
                a + R"("},{"path":"/b/x.so","sha256":")" + b + R"("}]}}})"),
            "$.components.nccl.libraries[1]: lib.x.so is listed twice with different hashes (" + a + ", " + b + ")");
  EXPECT_EQ(ExpectError(R"({"recordVersion":1,"outputs":{}})"), "$.outputs.manifest: missing");
  EXPECT_EQ(ExpectError(R"({"reference":"oci:x","digest":"sha256:12"})"),
            "$.digest: digest 'sha256:12': want sha256: and 64 lowercase hex digits");
  EXPECT_EQ(ExpectedFields("[]").error().kind, ErrorKind::kInvalidInput);
}

// ---- Mixed architectures ---------------------------------------------------------------

// An arm64 node of the same golden index: its own manifest, stack.json and library bytes,
// the same versions, index and golden-run weights.
Fingerprint ArmNode(int rank) {
  Fingerprint fp = Node(rank);
  fp.fields["platform"] = "linux/arm64";
  fp.fields["image.digest"] = "sha256:" + std::string(64, 'a');
  fp.fields["image.stack_json"] = "sha256:" + std::string(64, 'b');
  fp.fields["lib.libnccl.so.2"] = "sha256:" + std::string(64, 'c');
  fp.fields["lib.libcudart.so.13"] = "sha256:" + std::string(64, 'd');
  return fp;
}
Fingerprint X86Node(int rank) {
  Fingerprint fp = Node(rank);
  fp.fields["platform"] = "linux/amd64";
  return fp;
}

TEST(CompareMixed, BinariesAreComparedWithinAPlatformVersionsAcrossAll) {
  std::vector<Fingerprint> fps = {X86Node(0), ArmNode(1), X86Node(2), ArmNode(3)};
  for (auto& fp : fps) fp.fields["image.index"] = "sha256:" + std::string(64, 'e');
  Verdict v = CompareOk(Input(fps));
  EXPECT_TRUE(v.ok()) << RenderText(v);
  EXPECT_EQ(v.notes["platforms"], "linux/amd64: 2 workers, linux/arm64: 2 workers");
  EXPECT_EQ(v.notes["compared per platform"], "image.digest, image.stack_json, lib.*");
  EXPECT_EQ(v.Summary(), "fleet check: OK: 4 of 4 workers match across 2 platforms");
  EXPECT_EQ(ScopeOf("lib.libnccl.so.2"), FieldScope::kPlatform);
  EXPECT_EQ(ScopeOf("image.digest"), FieldScope::kPlatform);
  EXPECT_EQ(ScopeOf("image.index"), FieldScope::kFleet);
  EXPECT_EQ(ScopeOf("nccl"), FieldScope::kFleet);
  EXPECT_EQ(ScopeOf("golden_run.weights"), FieldScope::kFleet);
}

TEST(CompareMixed, AnArmWorkerWithAnotherNcclIsNamed) {
  std::vector<Fingerprint> fps = {X86Node(0), ArmNode(1)};
  fps[1].fields["nccl"] = "2.27.7";
  Verdict v = CompareOk(Input(fps));
  ASSERT_EQ(v.diffs.size(), 1u) << RenderText(v);
  EXPECT_EQ(v.diffs[0].field, "nccl");
  EXPECT_EQ(v.diffs[0].platform, "");
  EXPECT_EQ(v.diffs[0].groups, (std::vector<ValueGroup>{{"2.28.9", {0}}, {"2.27.7", {1}}}));
  EXPECT_EQ(v.ExitCode(), 1);
}

TEST(CompareMixed, ALibraryDiffersAmongTheWorkersOfOnePlatform) {
  std::vector<Fingerprint> fps = {ArmNode(0), X86Node(1), ArmNode(2), ArmNode(3)};
  fps[3].fields["lib.libnccl.so.2"] = "sha256:" + std::string(64, 'f');
  Verdict v = CompareOk(Input(fps));
  ASSERT_EQ(v.diffs.size(), 1u) << RenderText(v);
  EXPECT_EQ(v.diffs[0].field, "lib.libnccl.so.2");
  EXPECT_EQ(v.diffs[0].platform, "linux/arm64");
  EXPECT_EQ(v.diffs[0].groups, (std::vector<ValueGroup>{{"sha256:" + std::string(64, 'c'), {0, 2}},
                                                        {"sha256:" + std::string(64, 'f'), {3}}}));
  EXPECT_NE(v.Summary().find("lib.libnccl.so.2 on linux/arm64"), std::string::npos) << v.Summary();
  EXPECT_NE(v.Summary().find("worker 3 differs"), std::string::npos) << v.Summary();
  oci::Json j = RenderJson(v);
  EXPECT_EQ(j["diffs"][0]["scope"], "platform");
  EXPECT_EQ(j["diffs"][0]["platform"], "linux/arm64");
  auto back = VerdictFromWire(VerdictToWire(v));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, v);
}

TEST(CompareMixed, OneFieldMayDifferOnTwoPlatformsAndCrossTheWireTwice) {
  std::vector<Fingerprint> fps = {ArmNode(0), X86Node(1), ArmNode(2), X86Node(3)};
  fps[2].fields["lib.libcudart.so.13"] = "sha256:" + std::string(64, '1');
  fps[3].fields["lib.libcudart.so.13"] = "sha256:" + std::string(64, '2');
  Verdict v = CompareOk(Input(fps));
  ASSERT_EQ(v.diffs.size(), 2u) << RenderText(v);
  EXPECT_EQ(v.diffs[0].platform, "linux/amd64");
  EXPECT_EQ(v.diffs[1].platform, "linux/arm64");
  auto back = VerdictFromWire(VerdictToWire(v));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, v);
}

}  // namespace
}  // namespace imgtool::fleet
