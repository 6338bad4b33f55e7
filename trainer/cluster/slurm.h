// The cluster of a Slurm job step, from the variables srun gives each task: the rank
// (SLURM_PROCID), the world (SLURM_NTASKS), the node of every rank (SLURM_STEP_NODELIST,
// SLURM_STEP_TASKS_PER_NODE, SLURM_DISTRIBUTION), the chief (task 0, on the step's first
// node) and a store port derived from the job and step ids. No libslurm: the variables
// are read and checked here (hostlist.h expands the node list). Used through
// DetectCluster (launcher.h), which decides whether this is Slurm at all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/launcher.h"

namespace trainer {

// The store's port under Slurm: kSlurmPortBase + (job_id mod 1024) * 16 + (step_id mod 16),
// so 16384..32767, below Linux's ephemeral range (32768-60999: no outgoing connection
// holds one). Two steps of one job differ unless their ids differ by a multiple of 16;
// two jobs differ unless their ids differ by a multiple of 1024. Only such a pair, with
// both chiefs on one node at once, collides (the chief then says to set --rendezvous).
inline constexpr int kSlurmPortBase = 16384;
int SlurmStorePort(uint64_t job_id, uint64_t step_id);

// SLURM_STEP_ID above this is a step without srun tasks (Slurm's SLURM_MAX_NORMAL_STEP_ID).
inline constexpr uint64_t kSlurmMaxNormalStep = 0xfffffff0u;

// Whether this looks like a task of Slurm: SLURM_NTASKS with SLURM_PROCID, or with
// SLURM_STEP_NODELIST (a container step, whose tasks Slurm 22.05 gives no SLURM_PROCID).
bool SlurmPresent(const EnvLookup& env);

// Slurm's variables are set, but this process is not a task of an srun step: the batch
// script, salloc's shell, the extern or interactive step. What it is ("the batch script
// of job 1234"), or nullopt for a task of a step.
std::optional<std::string> SlurmOutsideStep(const EnvLookup& env);

// The node of every rank. `distribution` is SLURM_DISTRIBUTION (empty: block). For block
// and cyclic, every rank's node; for any other (plane, arbitrary) nullopt: only a task's
// own node is known then, and every task is named by its rank alone (every worker must
// render the same report from its own list). Errors when the counts do not add up to `world` over `nodes`.
Result<std::optional<std::vector<std::string>>> SlurmNodesOfRanks(const std::vector<std::string>& nodes,
                                                                  const std::vector<int>& tasks_per_node,
                                                                  std::string_view distribution, int world);

// The cluster of this task. `store` replaces the chief's address when set (--rendezvous,
// IMGTOOL_RENDEZVOUS), with `store_source` naming it.
Result<ClusterConfig> SlurmCluster(const EnvLookup& env, const std::optional<HostPort>& store,
                                   const std::string& store_source);

}  // namespace trainer
