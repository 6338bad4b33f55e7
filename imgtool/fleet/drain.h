// Drain: which scheduler nodes a failed fleet check takes out of service, and why. Pure:
// a verdict and the node of every rank in, a plan out; the CLI runs the plan (the chief
// only: `scontrol update NodeName=n3 State=DRAIN Reason="imgtool: env.NCCL_ALGO differs"`)
// so the requeued job lands elsewhere.
//
// The rules, in one place (draining is destructive, so it happens only when the odd ones
// are certain):
//   - under --expect, a worker whose value of an expected field differs from the
//     expectation is odd;
//   - otherwise a field's odd workers are those outside its largest group, and only when
//     that group is a strict majority of the workers the field was compared among (more
//     than half; a plurality is not enough): 2 against 2, or 2-1-1, drains nobody and the
//     plan says "no majority" naming the field;
//   - golden-run suspects are odd when Compare found a majority (suspects are not every
//     arrived rank);
//   - one field without a majority refuses the whole plan: nothing is drained, since the
//     fleet's stack is itself in doubt;
//   - missing workers are not drained: a worker that did not arrive may be slow, its
//     network may be at fault, or it may never have been started; the report names it;
//   - a node is drained when any of its ranks is odd; its reason lists the fields (not
//     their values, which come from the worker) as "imgtool: env.NCCL_ALGO, nccl differ",
//     cut to kMaxReasonBytes; a node name or field outside [A-Za-z0-9._-] is not passed on.
#pragma once

#include <string>
#include <vector>

#include "fleet/compare.h"

namespace imgtool::fleet {

inline constexpr size_t kMaxReasonBytes = 120;

struct NodeDrain {
  std::string node;
  std::string reason;      // "imgtool: env.NCCL_ALGO differs"
  std::vector<int> ranks;  // the odd ranks on that node
  friend bool operator==(const NodeDrain&, const NodeDrain&) = default;
};

struct DrainPlan {
  std::vector<NodeDrain> drain;  // sorted by node name
  // Why nothing is drained although the check failed ("no majority for env.NCCL_ALGO (2
  // and 2 workers)"; "rank 3 has no node name"); empty when the plan stands.
  std::string refused;
  friend bool operator==(const DrainPlan&, const DrainPlan&) = default;
};

// `node_of_rank[r]` is rank r's node ("" when unknown: a plan that would drain it is
// refused). A verdict that is ok() gives an empty plan.
DrainPlan PlanDrain(const Verdict& verdict, const std::vector<std::string>& node_of_rank);

// A name scontrol may be given safely: 1..64 of [A-Za-z0-9._-], not starting with '-'.
bool IsSafeNodeName(const std::string& name);

// The plan for people: "drain n3: imgtool: env.NCCL_ALGO differs (rank 5, 6)" per node, or
// "not draining: <refused>".
std::string RenderDrainPlan(const DrainPlan& plan);
oci::Json DrainPlanJson(const DrainPlan& plan);

}  // namespace imgtool::fleet
