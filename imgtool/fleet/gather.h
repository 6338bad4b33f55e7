// Gather: the fleet check's exchange over the trainer's rendezvous store (the same
// TF_CONFIG parsing and TCP store the trainer uses, trainer/cluster). The chief (rank 0)
// serves the store on the rendezvous address; then
//   1. every worker SETs fp/<rank> = its fingerprint digest, and fpfull/<digest> = its
//      full fingerprint only if no worker has stored that digest yet (CHECK first);
//   2. the chief waits (until --timeout) for every fp/<rank>, reads one full fingerprint
//      per distinct digest, runs Compare and SETs "verdict";
//   3. every worker waits for "verdict", prints it, SETs ack/<rank>; the chief serves
//      until every arrived worker has acked (or a short grace), then stops the store.
// Bytes per worker when all match: one digest, one CHECK, one verdict (constant in N).
// The chief reads N digests: its traffic grows linearly, nobody else's does.
// Waits are server-side (the store's WAIT op), so N waiting workers cost no polling.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "cluster/cluster_config.h"
#include "fleet/compare.h"
#include "fleet/fingerprint.h"
#include "oci/result.h"

namespace imgtool::fleet {

struct GatherOptions {
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};  // --timeout
  std::vector<std::string> ignore;                               // --ignore
  std::map<std::string, std::string> expected;                   // --expect
};

struct GatherStats {
  uint64_t bytes_sent = 0;      // this worker's store traffic
  uint64_t bytes_received = 0;
  double seconds = 0;           // from start to verdict
  int distinct_digests = 0;     // seen by the chief (0 on other workers)
};

// The names workers go by in reports: "chief 0", "worker 1", with their addresses.
std::vector<WorkerId> WorkersOf(const trainer::ClusterConfig& cluster);

// Every worker calls this with the same cluster; all return the same verdict. Errors:
// the chief cannot listen (port in use: kTransport naming host:port), the chief is
// unreachable within the timeout (kNotFound naming the chief), a malformed verdict.
Result<Verdict> GatherVerdict(const trainer::ClusterConfig& cluster, const Fingerprint& mine,
                              const GatherOptions& options, GatherStats* stats = nullptr);

}  // namespace imgtool::fleet
