// Compare: the pure half of the fleet check. Given each worker's fingerprint digest, the
// full fingerprint of one worker per distinct digest, and who never arrived, it produces
// the verdict every worker prints. No I/O, no clock: the gather (gather.h) feeds it.
//
// Scale: workers exchange only digests; full fingerprints move once per distinct digest,
// so when all match the chief reads N digests and one fingerprint.
//
// The rules, in one place:
//   - arrived workers are grouped by digest; with more than one group, every compared
//     field (not --ignore'd) whose value differs between groups is a FieldDiff, its
//     groups expanded to ranks ("(absent)" where a worker lacks the field);
//   - digests that differ while no compared field does (workers ran with different
//     --ignore lists) still fail: a FieldDiff "fingerprint" lists the digests;
//   - --expect: a field whose value differs from the expectation on any worker is a
//     FieldDiff with `expected` set and every value group listed, matching ones too, so
//     the table shows who is right. Versions match as dotted prefixes either way
//     (ExpectedValueMatches); lib.* expectations skip workers that did not load that
//     library (the probe hashes what it loads, stack.json lists a package's every file);
//   - golden_run.weights differing: suspects are the ranks outside the largest group when
//     that group is strictly the largest; on a tie there is no majority and every
//     arrived rank is a suspect;
//   - "the majority" in the summary is the largest group of a FieldDiff, when strictly
//     largest (a plurality, not necessarily more than half);
//   - mixed architectures: a fleet may mix platforms (field "platform", "linux/amd64",
//     "linux/arm64"). Fields whose value is a property of the binaries (image.digest, the
//     platform's manifest; image.stack_json, which lists library hashes; lib.*) are
//     compared among the workers of one platform only (FieldScope kPlatform; the diff
//     names the platform); every other field (versions, image.index, env.*,
//     golden_run.weights, ...) across all workers. Fingerprints without "platform" are
//     one platform.
// Diffs come in the order of the fingerprint's field list (fingerprint.h): image, os,
// driver, CUDA libraries, GPU, lib.*, env.*, anything else, golden_run last.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fleet/fingerprint.h"
#include "fleet/perf_verdict.h"
#include "oci/canonical_json.h"
#include "oci/result.h"

namespace imgtool::fleet {

struct WorkerId {
  int rank = 0;
  std::string name;     // "worker 1", "chief 0" (TF_CONFIG type and index); "n3 rank 5" under a scheduler
  std::string address;  // "10.0.0.2:2222", or "" in flag mode

  friend bool operator==(const WorkerId&, const WorkerId&) = default;
};

// Workers holding one value of one field, ranks ascending.
struct ValueGroup {
  std::string value;  // "(absent)" when the field is missing on those workers
  std::vector<int> ranks;

  friend bool operator==(const ValueGroup&, const ValueGroup&) = default;
};

inline constexpr const char* kAbsent = "(absent)";

// Where a field is compared: among the workers of one platform, or across the fleet.
enum class FieldScope { kPlatform, kFleet };
FieldScope ScopeOf(const std::string& field);

struct FieldDiff {
  std::string field;
  std::string platform;                 // a kPlatform field: the platform whose workers differ; else ""
  std::vector<ValueGroup> groups;       // largest group first; ties: smallest first rank first
  std::optional<std::string> expected;  // the golden build's value, when --expect named it

  friend bool operator==(const FieldDiff&, const FieldDiff&) = default;
};

struct Verdict {
  int expected_workers = 0;
  std::vector<WorkerId> workers;  // every worker of the cluster, in rank order
  std::vector<int> missing;       // ranks that never arrived (timeout)
  std::vector<FieldDiff> diffs;   // fields that differ between arrived workers or from --expect
  // With --golden-run: ranks whose golden_run.weights differs from the majority's.
  std::vector<int> suspects;
  // e.g. "golden_run.seconds" -> "0.41"; Compare sets "fingerprint" -> the common digest
  // when every arrived worker has the same one, and, in a fleet of several platforms,
  // "platforms" -> "linux/amd64: 1 worker, linux/arm64: 1 worker" and "compared per
  // platform" -> the fields compared within a platform only (every other one across all).
  std::map<std::string, std::string> notes;
  // With --perf: the figures, medians and the workers below the threshold (perf_verdict.h).
  PerfVerdict perf;
  bool ok() const { return missing.empty() && diffs.empty() && suspects.empty() && !perf.Fails(); }
  // 0 all match; 1 stacks differ (fields, --expect or golden run); 3 workers missing
  // (takes precedence: a partial fleet proves nothing); 7 the stacks match but a worker
  // is below the --perf threshold (not with --perf-warn).
  int ExitCode() const;
  // One line, workers named by WorkerId::name (long lists cut: "... and 12 more"):
  //   "fleet check: OK: 4 of 4 workers match (fingerprint sha256:ab12cd34ef56)"
  //   "fleet check: MISMATCH: 2 fields differ (nccl, env.NCCL_ALGO); worker 1 differs
  //    from the majority"                    ("; golden run suspects: worker 1" when any)
  //   "fleet check: MISMATCH: 1 field differs (nccl); no majority (2 and 2 workers)"
  //   "fleet check: MISMATCH: 1 field differs (nccl); all 4 workers differ from --expect"
  //   "fleet check: 3 of 4 arrived; missing: worker 1 (10.0.0.2:2222), worker 3
  //    (10.0.0.4:2222)"                      ("; 1 field differs among them (nccl)" when any)
  std::string Summary() const;

  friend bool operator==(const Verdict&, const Verdict&) = default;
};

struct CompareInput {
  std::vector<WorkerId> workers;            // all of them, rank order
  std::map<int, std::string> digests;       // rank -> digest, for arrived workers only
  std::map<std::string, Fingerprint> full;  // digest -> one fingerprint with that digest
  std::vector<std::string> ignore;          // --ignore patterns
  // --expect: field -> value every worker must have (see ExpectedFields).
  std::map<std::string, std::string> expected;
};

// Errors when a digest has no full fingerprint in `full`, or a rank is not one of
// `workers` (a protocol bug, kInternal).
Result<Verdict> Compare(const CompareInput& input);

// The --expect rule for one field. Versions (cuda.runtime, cublas, cudnn, nccl,
// driver.version, cuda.driver_api) match when equal or when one is a dotted prefix of the
// other: a pin "13.0" and a reported "13.0"; stack.json's package "13.0.96" and
// cudaRuntimeGetVersion's "13.0"; cuDNN "9.19.0.56" and "9.19.0". Every other field
// (image.digest, lib.*, ...) must be equal.
bool ExpectedValueMatches(const std::string& field, const std::string& expected, const std::string& value);

// Fields a golden build promises, from one of
//   /etc/imgtool/stack.json content: cuda -> cuda.runtime, cublas, cudnn, nccl, driver ->
//     driver.version (each the package's upstream version when a package provides it,
//     else the pin), every library -> lib.<file name> = "sha256:<hex>", and, when the text
//     is the file byte for byte as the build wrote it (canonical JSON and a newline),
//     image.stack_json = its sha256;
//   an imgtool build record (OUTPUT.build.json): image.digest = outputs.manifest.digest;
//   `imgtool build --json` output: image.digest = digest.
// A build record or build output with a "stack" member (stack.json's content) adds its
// fields too. Anything else is kInvalidInput naming the path.
Result<std::map<std::string, std::string>> ExpectedFields(const std::string& json_text);

// The report for people: the summary line, then one table row per value of each
// differing field, largest group first (FIELD, VALUE, WORKERS; "(expected)" rows under
// --expect; runs of 3+ consecutive workers as "worker 0-99"), then the missing workers,
// the golden run suspects, the notes, and a final "OK" or "FAILED (exit N)". Control
// characters in values are shown escaped ("\x1b") so a hostile value cannot drive the
// terminal. Example:
//   fleet check: MISMATCH: 1 field differs (nccl); worker 1 differs from the majority
//
//   FIELD  VALUE   WORKERS
//   nccl   2.28.9  worker 0, worker 2, worker 3
//          2.19.3  worker 1
//
//   FAILED (exit 1)
std::string RenderText(const Verdict& v);
// The same for machines: {"ok", "exit_code", "summary", "expected_workers", "arrived",
// "missing": [{rank,name,address}], "diffs": [{field, scope ("fleet" or "platform"),
// platform?, expected?, groups: [{value, ranks,
// workers: [names]}]}], "suspects": [{rank,name,address}], "notes": {...}}.
oci::Json RenderJson(const Verdict& v);

// The verdict moves from the chief to every worker as canonical JSON, rank lists as
// [first, last] runs so a 10,000-worker verdict with one outlier stays small:
//   {"version":1, "expected_workers":N, "workers":[{rank,name,address}] (unless kOmit),
//    "missing":[[a,b]...], "diffs":[{field, platform?, expected?, groups:[{value, ranks:[[a,b]...]}]}],
//    "suspects":[[a,b]...], "notes":{...}}
// kOmit leaves out the workers (O(N) bytes): every worker knows the cluster already and
// passes its own list to VerdictFromWire.
enum class WireWorkers { kInclude, kOmit };
inline constexpr size_t kMaxWireBytes = 64u << 20;
inline constexpr int kMaxWorkers = 1 << 20;
std::string VerdictToWire(const Verdict& v, WireWorkers workers = WireWorkers::kInclude);
// Strict and bounded (the text comes over the network): unknown keys, wrong types,
// ranks out of range or listed twice in one field, oversize strings are kInvalidInput
// naming the path ("$.diffs[0].groups[1].ranks[0]: rank 7 is not a worker"). `workers`
// fills in a verdict sent with kOmit; when the text carries workers too, they must equal
// `workers` (kIntegrity: the chief sees another cluster).
Result<Verdict> VerdictFromWire(const std::string& text, const std::vector<WorkerId>& workers = {});

}  // namespace imgtool::fleet
