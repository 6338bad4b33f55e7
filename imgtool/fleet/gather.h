// Gather: the fleet check's exchange over the trainer's rendezvous store (the same
// TF_CONFIG parsing and TCP store the trainer uses, trainer/cluster). The chief (rank 0)
// serves the store on the rendezvous address; every worker connects and claims its rank
// (with the job token when there is one: the store then admits no one else); a worker
// writes only its own keys, once (trainer/cluster/store_keys.h). Then
//   1. the chief SETs fpfull/<digest> (its full fingerprint) and fp/0 = its digest;
//   2. every other worker waits for fp/0; when its own digest differs from the chief's it
//      SETs fpfull/<digest> unless a worker with that digest already did (CHECK first);
//      then fp/<rank> = its digest. A full fingerprint is always stored before its
//      digest is published, so the chief never reads a digest it cannot explain;
//      It reads fp/<rank> back: the store must hold what it sent;
//   3. the chief waits (until --timeout) for every fp/<rank>, fails when the store saw a
//      rank claimed twice (two processes with one rank, or an outsider), reads one full
//      fingerprint per distinct digest, runs Compare and SETs "verdict" (without the
//      worker list, which every worker derives from its own cluster config);
//   4. every worker waits for "verdict", decodes it with its own worker list, checks that
//      a verdict of one fingerprint for all names its own, SETs ack/<rank>; the chief
//      serves until every arrived worker has acked (or 5 s), then stops the store,
//      freeing the port for the trainer that runs next.
// Bytes per worker when all match: a wait and a read of fp/0, one digest, one verdict
// (constant in N). The chief reads N digests (one pipelined GetMany: N/256 round trips):
// its traffic grows linearly, nobody else's.
// Waits are server-side (the store's WAIT op), so N waiting workers cost no polling.
// With --perf (options.perf), every worker also publishes its host before its digest, and
// between the fingerprints and the verdict runs perf_step.h's GEMM and allreduce; the
// chief's verdict then carries the figures and the flags (Verdict::perf).
// A worker whose chief never answers (or never publishes) reports the chief as missing
// (a verdict with missing = [0] and a "chief" note: exit 3), like any missing worker.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cluster/cluster_config.h"
#include "cluster/job_token.h"
#include "fleet/compare.h"
#include "fleet/fingerprint.h"
#include "fleet/perf_step.h"
#include "oci/result.h"

namespace imgtool::fleet {

struct GatherOptions {
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};  // --timeout
  std::vector<std::string> ignore;                              // --ignore
  std::map<std::string, std::string> expected;                  // --expect
  // Progress lines for people ("waiting for 3 of 4 workers"); the CLI prints them on a
  // TTY. Called on the calling thread, about once a second while waiting.
  std::function<void(const std::string&)> progress;
  // The chief's store reports each peer it refuses or drops here (a limit passed,
  // trainer::StoreLimits; a claim or a write refused); called from the store's threads.
  std::function<void(const std::string&)> store_log;
  // The job token (IMGTOOL_FLEET_TOKEN): required of every worker by the chief's store,
  // and of the store by every worker. Null: the store is open.
  trainer::JobTokenPtr token;
  // --perf: a GEMM and an allreduce on every worker between the fingerprints and the
  // verdict (perf_step.h); every worker must give it, or none.
  PerfOptions perf;
};

struct GatherStats {
  uint64_t bytes_sent = 0;  // this worker's store traffic
  uint64_t bytes_received = 0;
  double seconds = 0;        // from start to verdict
  int distinct_digests = 0;  // seen by the chief (0 on other workers)
};

// The names workers go by in reports: "chief 0", "worker 1" (TF_CONFIG, flags), "n3 rank 5"
// under a scheduler that names the node ("rank 5" where it does not), with their addresses.
std::vector<WorkerId> WorkersOf(const trainer::ClusterConfig& cluster);

// Every worker calls this with the same cluster; all return the same verdict. Errors:
// the chief cannot listen (port in use: kTransport naming host:port), the connection to
// the chief is lost mid-way (kTransport), the store refuses this worker's claim (kDenied:
// its rank is claimed already, naming both claimants; a missing or wrong token) or does
// not prove the token, the store or the verdict disagrees with what this worker sent
// (kIntegrity), a malformed verdict, or the chief's own error (relayed to every worker;
// kDenied when a rank was claimed twice). An unreachable chief is a verdict, not an error
// (above).
Result<Verdict> GatherVerdict(const trainer::ClusterConfig& cluster, const Fingerprint& mine,
                              const GatherOptions& options, GatherStats* stats = nullptr);

}  // namespace imgtool::fleet
