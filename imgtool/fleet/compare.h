// Compare: the pure half of the fleet check. Given each worker's fingerprint digest, the
// full fingerprint of one worker per distinct digest, and who never arrived, it produces
// the verdict every worker prints. No I/O, no clock: the gather (gather.h) feeds it.
//
// Scale: workers exchange only digests; full fingerprints move once per distinct digest,
// so when all match the chief reads N digests and one fingerprint.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fleet/fingerprint.h"
#include "oci/canonical_json.h"
#include "oci/result.h"

namespace imgtool::fleet {

struct WorkerId {
  int rank = 0;
  std::string name;     // "worker 1", "chief 0" (TF_CONFIG type and index)
  std::string address;  // "10.0.0.2:2222", or "" in flag mode
};

// Workers holding one value of one field, ranks ascending.
struct ValueGroup {
  std::string value;  // "(absent)" when the field is missing on those workers
  std::vector<int> ranks;
};

struct FieldDiff {
  std::string field;
  std::vector<ValueGroup> groups;   // largest group first; ties: smallest first rank first
  std::optional<std::string> expected;  // the golden build's value, when --expect named it
};

struct Verdict {
  int expected_workers = 0;
  std::vector<WorkerId> workers;  // every worker of the cluster, in rank order
  std::vector<int> missing;       // ranks that never arrived (timeout)
  std::vector<FieldDiff> diffs;   // fields that differ between arrived workers or from --expect
  // With --golden-run: ranks whose golden_run.weights differs from the majority's.
  std::vector<int> suspects;
  std::map<std::string, std::string> notes;  // e.g. "golden_run.seconds" -> "0.41"
  bool ok() const { return missing.empty() && diffs.empty() && suspects.empty(); }
  // 0 all match; 1 stacks differ (fields, --expect or golden run); 3 workers missing.
  int ExitCode() const;
  // One line: "fleet check: 4 of 4 workers match (sha256:ab12...)" /
  // "fleet check: MISMATCH: 2 fields differ; worker 1 differs from the majority" /
  // "fleet check: 3 of 4 arrived; missing: worker 1 (10.0.0.2:2222)".
  std::string Summary() const;
};

struct CompareInput {
  std::vector<WorkerId> workers;            // all of them, rank order
  std::map<int, std::string> digests;       // rank -> digest, for arrived workers only
  std::map<std::string, Fingerprint> full;  // digest -> one fingerprint with that digest
  std::vector<std::string> ignore;          // --ignore patterns
  // --expect: field -> value every worker must have (see ExpectedFields).
  std::map<std::string, std::string> expected;
};

// Errors when a digest has no full fingerprint in `full` (a protocol bug, kInternal).
Result<Verdict> Compare(const CompareInput& input);

// Fields a golden build promises, from /etc/imgtool/stack.json content or from a build
// record (the imgtool build output JSON, which carries the stack and the image digest):
// cuda.runtime, cublas, cudnn, nccl versions (as "13.0.88" style strings, compared as
// dotted prefixes like the build's pins), lib.<file> hashes, image.digest when known.
Result<std::map<std::string, std::string>> ExpectedFields(const std::string& json_text);

// The report for people: the summary line, then one table row per differing field
// (field | value | workers), largest group first, and a final OK / FAILED line.
std::string RenderText(const Verdict& v);
// The same for machines: {"ok", "exit_code", "summary", "expected_workers", "arrived",
// "missing": [{rank,name,address}], "diffs": [{field, expected?, groups: [{value, ranks,
// workers: [names]}]}], "suspects": [...], "notes": {...}}.
oci::Json RenderJson(const Verdict& v);
// The verdict moves from the chief to every worker as this JSON; FromJson is strict.
std::string VerdictToWire(const Verdict& v);
Result<Verdict> VerdictFromWire(const std::string& text);

}  // namespace imgtool::fleet
