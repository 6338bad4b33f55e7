// The perf step of `fleet check --perf`, run inside the gather (gather.h) over the same
// rendezvous store, between the fingerprints and the verdict:
//   1. every worker publishes perfhost/<rank> (its host name) before fp/<rank>;
//   2. the chief, once every fingerprint is in, publishes each rank's turn under
//      perfturn/<rank>/prev (the chief's keys): "first", "after <rank>" (the previous
//      rank on the same host), or "skip <why>" for everyone when a worker is missing (a
//      ring of the arrived would time out on the missing one, and a partial fleet fails
//      the check anyway);
//   3. every worker waits for its turn: workers of one host run their GEMM one after
//      another in rank order (perfgemm/<rank> says "done" to the next), so co-located
//      workers never time each other's cores; hosts run concurrently;
//   4. every worker joins the allreduce ring (perf_measure.h); its first, untimed
//      iteration is the barrier after every GEMM, so no GEMM is timed under traffic;
//   5. every worker publishes perf/<rank> (PerfRecordToWire: its figures or its error);
//      the chief reads them all (until --timeout), DecidePerf, and the verdict carries it.
// Bytes per worker, constant in N: its own host, turn, GEMM note, ring record and figures,
// plus its two ring neighbours' records. The chief reads N hosts and N records.
// Time: the workers of the most crowded host, one after another, each for the GEMM budget
// (0.2 s, at least 3 repetitions), then the allreduce (1 + 5 iterations of 4 MB):
//   T ~ K_max x max(0.2 s, 3 x one GEMM) + 6 x allreduce(4 MB) + a few store round trips,
// 16 co-located workers of a server core: ~3.5 s.
#pragma once

#include <chrono>
#include <optional>
#include <set>
#include <string>

#include "cluster/cluster_config.h"
#include "cluster/tcp_store.h"
#include "fleet/perf_measure.h"
#include "fleet/perf_verdict.h"

namespace imgtool::fleet {

struct PerfOptions {
  bool enabled = false;                                    // --perf
  int threshold_permille = kPerfDefaultThresholdPermille;  // --perf-threshold F, as F * 1000
  bool warn_only = false;                                  // --perf-warn
  GemmOptions gemm;
  AllreduceOptions allreduce;
  std::string host;  // where this worker runs, for taking turns; empty: gethostname()
};

// The CLI's flags: --perf, --perf-threshold F (0 < F <= 1; rounded to thousandths),
// --perf-warn.
PerfOptions PerfOptionsFromFlags(bool perf, double threshold, bool warn_only);

// Step 1.
Status PublishPerfHost(trainer::TcpStoreClient& store, int rank, const PerfOptions& options);

// Step 2, the chief. `absent`: ranks whose fingerprint never arrived. Returns why the
// perf step is skipped ("" when it runs).
Result<std::string> PlanPerfTurns(trainer::TcpStoreClient& store, int world_size, const std::set<int>& absent);

// Steps 3-5, every worker (the chief too). Errors of the step itself become the record's
// error (the chief flags the worker); nullopt when the chief said skip or never planned.
std::optional<PerfFigures> RunPerfStep(trainer::TcpStoreClient& store, const trainer::ClusterConfig& cluster,
                                       const PerfOptions& options, std::chrono::milliseconds timeout);

// The chief: every rank's record (until `timeout`), decided. A rank without one is
// flagged ("no perf figures within 60s").
Result<PerfVerdict> CollectPerf(trainer::TcpStoreClient& store, int world_size, const PerfOptions& options,
                                std::chrono::milliseconds timeout);

// A fleet of one: the GEMM alone, decided (no allreduce, nobody to compare with).
PerfVerdict PerfAlone(const PerfOptions& options);

}  // namespace imgtool::fleet
