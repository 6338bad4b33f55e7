// The fleet verdict on the wire (imgtool/fleet/wire.cc, compare.h VerdictFromWire): the
// chief's verdict as every worker reads it off the rendezvous store. Read with and
// without the cluster's worker list (a verdict sent without it names ranks only); a
// verdict read is rendered as the report and the JSON, and written back gives the same
// verdict again. The same bytes are also read as a worker's perf record (perf/<rank>) and
// its Gloo ring record (perfring/<rank>), the other two values of `fleet check --perf`.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fleet/compare.h"
#include "fuzz_util.h"

namespace {

using namespace imgtool::fleet;

std::vector<WorkerId> Workers() {
  std::vector<WorkerId> w;
  for (int r = 0; r < 4; ++r) {
    std::string name = r == 0 ? "chief 0" : "worker " + std::to_string(r - 1);
    w.push_back({r, name, "10.0.0." + std::to_string(r + 1) + ":2222"});
  }
  return w;
}

Verdict Sample() {
  Verdict v;
  v.expected_workers = 4;
  v.workers = Workers();
  v.missing = {3};
  v.diffs.push_back({"nccl", "", {{"2.28.9", {0, 2}}, {"2.19.3", {1}}}, std::nullopt});
  v.diffs.push_back({"cuda.runtime", "", {{"13.0", {0, 1, 2}}}, std::string("12.8")});
  v.diffs.push_back({"lib.libnccl.so.2", "linux/arm64", {{"sha256:aa", {0}}, {"sha256:bb", {2}}}, std::nullopt});
  v.suspects = {1};
  v.notes["golden_run.seconds"] = "0.41";
  PerfFigures slow, failed;
  slow.milli = {{kPerfGemm, 9000}, {kPerfAllreduce, 1000}};
  failed.error = "allreduce over Gloo: peer closed";
  v.perf = DecidePerf({{0, slow}, {2, failed}}, 500, false);
  return v;
}

void Check(const Verdict& v) {
  (void)v.Summary();
  (void)v.ExitCode();
  (void)RenderText(v);
  (void)RenderJson(v);
  auto again = VerdictFromWire(VerdictToWire(v));
  if (!again.ok() || !(*again == v)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  imgtool::fuzz::MaybeWriteSeeds([] {
    Verdict ok;
    ok.expected_workers = 4;
    ok.workers = Workers();
    ok.notes["fingerprint"] = "sha256:" + std::string(64, 'a');
    return imgtool::fuzz::Seeds{{"mismatch.json", VerdictToWire(Sample())},
                                {"mismatch-omit.json", VerdictToWire(Sample(), WireWorkers::kOmit)},
                                {"ok.json", VerdictToWire(ok)},
                                {"perf-record.json", PerfRecordToWire(Sample().perf.rows.at(0))},
                                {"ring-record.bin", RingRecordToWire({'a', 'b'}, {'c'})}};
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(imgtool::fuzz::Bytes(data, size));
  static const std::vector<WorkerId> workers = Workers();
  if (auto v = VerdictFromWire(text); v.ok()) Check(*v);
  if (auto v = VerdictFromWire(text, workers); v.ok()) Check(*v);
  if (auto f = PerfRecordFromWire(text); f.ok()) {
    auto again = PerfRecordFromWire(PerfRecordToWire(*f));
    if (!again.ok() || !(*again == *f)) std::abort();
  }
  for (int which : {0, 1}) {
    if (auto e = RingRecordEntry(text, which); e.ok() && e->size() > text.size()) std::abort();
  }
  return 0;
}
