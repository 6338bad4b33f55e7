// Slurm's compressed lists, expanded natively (no libslurm, no `scontrol show hostnames`):
// a hostlist such as "n[1-3,7],gpu-a[01-02]" and a task count list such as "2(x3),1".
// Both arrive in environment variables a job's owner can set, so both are hostile input:
// every count is checked against its cap BEFORE anything is expanded, names and ranges
// have length caps, and the parsers are loops (no recursion). Not a general glob: only
// what Slurm writes (no stride, no nested brackets).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trainer {

struct HostlistLimits {
  size_t max_nodes = 65536;     // names in the whole expansion (Slurm's own MaxNodeCount is below)
  size_t max_input = 1u << 20;  // bytes of the compressed list
  // Characters in one expanded name: DNS allows 253, and "<node> rank 65535" must fit the
  // 256 bytes a fleet verdict allows a worker's name (imgtool/fleet/wire.cc).
  size_t max_name = 200;
  size_t max_bound_digits = 9;     // digits in a range bound: "[0000000001-2]" is the most
  size_t max_groups_per_name = 8;  // bracket groups in one name: "r[1-2]n[1-2]" has 2
};

// "n[1-3,7],gpu-a[01-02],login" -> n1 n2 n3 n7 gpu-a01 gpu-a02 login, in that order. A
// bound with leading zeros sets the width of the whole range ("[08-10]": 08 09 10).
// Several groups in one name expand left to right, the last varying fastest
// ("r[1-2]n[1-2]": r1n1 r1n2 r2n1 r2n2). Names hold letters, digits, '-', '_', '.'.
// Errors (kInvalidInput) quote the offending part and name the cap that was passed.
Result<std::vector<std::string>> ExpandHostlist(std::string_view list, const HostlistLimits& limits = {});

// SLURM_STEP_TASKS_PER_NODE / SLURM_TASKS_PER_NODE: "2(x3),1" -> 2 2 2 1. Every count
// is 1..max_count; the list expands to at most limits.max_nodes entries.
Result<std::vector<int>> ExpandTaskCounts(std::string_view list, int max_count, const HostlistLimits& limits = {});

}  // namespace trainer
