// The pure half of the fleet check's performance preflight (`fleet check --perf`): each
// worker's figures in, the fleet's medians and the workers below a fraction of them out.
// No I/O, no clock: perf_step.h measures and exchanges, this decides, so the same figures
// always give the same flags (torchtitan #915: one node with a slow GEMM or a slow link
// drags the whole job, and matching stacks do not show it).
//
// Figures are integers in thousandths of their display unit (MFLOP/s for GFLOP/s, MB/s
// for GB/s), so the decision is exact integer arithmetic and the verdict's canonical JSON
// (no floats) carries them unchanged.
//
// The rule: for each figure, the median over the workers that have it (the mean of the two
// middle values, rounded down, when their count is even); a worker is flagged when
// value * 1000 < threshold_permille * median, i.e. strictly below threshold x median. A
// worker whose perf step failed (no figures) is flagged with its reason. One worker is
// its own median and is never flagged; all equal, none is.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "oci/result.h"

namespace imgtool::fleet {

// The figures, in report order: "gemm" (GFLOP/s of the trainer's matmul, 2*M*N*K / s,
// best of a few repetitions) and "allreduce" (bus bandwidth in GB/s, nccl-tests' busbw:
// bytes / time * 2(n-1)/n).
inline constexpr const char* kPerfGemm = "gemm";
inline constexpr const char* kPerfAllreduce = "allreduce";
const std::vector<std::string>& PerfFigureNames();
// "GFLOP/s", "GB/s busbw".
std::string PerfUnit(const std::string& figure);

// One worker's figures (thousandths of the unit), or why it has none.
struct PerfFigures {
  std::map<std::string, int64_t> milli;  // figure -> value; a figure not measured is absent
  std::string error;                     // the perf step failed on that worker

  friend bool operator==(const PerfFigures&, const PerfFigures&) = default;
};

struct PerfFlag {
  int rank = 0;
  std::string figure;  // kPerfGemm, kPerfAllreduce; "" when the step failed (see error)
  int64_t value = 0;   // milli
  int64_t median = 0;  // milli
  std::string error;

  friend bool operator==(const PerfFlag&, const PerfFlag&) = default;
};

// What the verdict carries: the medians, the flags, and the workers' figures (all of them
// up to kPerfMaxRows workers, else the flagged ones only, so a large fleet's verdict stays
// small: `complete` says which).
inline constexpr int kPerfMaxRows = 64;
inline constexpr int kPerfDefaultThresholdPermille = 500;
// fleet check's exit code when the stacks match but a worker is flagged (without --perf-warn).
inline constexpr int kPerfExitCode = 7;

struct PerfVerdict {
  bool ran = false;  // --perf was given (and reached the decision)
  int threshold_permille = kPerfDefaultThresholdPermille;
  bool warn_only = false;  // --perf-warn: flags are reported, the exit code ignores them
  std::string skipped;     // why no figures were taken (e.g. workers missing)
  std::map<std::string, int64_t> medians;
  std::vector<PerfFlag> flags;  // rank order, then figure order
  std::map<int, PerfFigures> rows;
  bool complete = true;

  bool Fails() const { return ran && !warn_only && !flags.empty(); }
  friend bool operator==(const PerfVerdict&, const PerfVerdict&) = default;
};

// The decision. `figures`: rank -> figures of every worker that took part.
PerfVerdict DecidePerf(const std::map<int, PerfFigures>& figures, int threshold_permille, bool warn_only);

// The median of the values (even count: the two middle ones' mean, rounded down). 0 when empty.
int64_t MedianMilli(std::vector<int64_t> values);

// "12.1" (GFLOP/s, one decimal), "1.24" (GB/s, two decimals): milli -> display.
std::string PerfDisplay(const std::string& figure, int64_t milli);

// One flag as a report line, the worker named as the report names it:
//   "worker 2 (rank 2): gemm 12.1 GFLOP/s, 41% of the median 29.5: below 50%"
//   "worker 2 (rank 2): perf step failed: <error>"
std::string PerfFlagLine(const PerfFlag& flag, const std::string& worker_name, int threshold_permille);

// A worker's own record, as it publishes it under perf/<rank>:
//   {"figures":{"gemm":12100,"allreduce":1240}}  or  {"error":"..."}
// The reader is strict (the text comes over the network): unknown keys or figures, values
// out of [0, 10^15], oversize text or errors are kInvalidInput.
std::string PerfRecordToWire(const PerfFigures& figures);
Result<PerfFigures> PerfRecordFromWire(const std::string& text);

// A worker's Gloo ring record (perf_measure.cc, under perfring/<rank>): its pair
// addresses for its left and its right neighbour, each a u32 little-endian length (at
// most 1024) and the bytes. Entry 0 is the left one, 1 the right; a record that does not
// hold the entry whole is kInvalidInput (it comes over the network).
std::string RingRecordToWire(const std::vector<char>& to_left, const std::vector<char>& to_right);
Result<std::vector<char>> RingRecordEntry(const std::string& record, int which);

}  // namespace imgtool::fleet
