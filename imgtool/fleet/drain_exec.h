// Runs a drain plan (drain.h) through Slurm's own client: one
//   scontrol update NodeName=<node> State=DRAIN Reason=<reason>
// per node, argv only (no shell), each bounded in time. The chief alone runs it, so a
// node is drained once however many workers saw the verdict.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fleet/drain.h"
#include "oci/result.h"

namespace imgtool::fleet {

struct DrainOutcome {
  std::string node;
  bool drained = false;
  std::string error;  // why scontrol failed: "exit 1", "not found", "timed out after 30 s"
};

// `scontrol`: the program (found on PATH when it has no '/'). Each call is killed after
// `limit`. Never fails as a whole: each node's outcome says what happened.
std::vector<DrainOutcome> RunDrainPlan(const DrainPlan& plan, const std::string& scontrol = "scontrol",
                                       std::chrono::seconds limit = std::chrono::seconds(30));

}  // namespace imgtool::fleet
