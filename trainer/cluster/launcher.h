// DetectCluster: who is in the job and which of them we are, from whatever started this
// process: TF_CONFIG, Slurm's srun, Open MPI's mpirun, a Kubernetes Indexed Job, or the
// --rank / --world-size / --rendezvous flags. One decision for the trainer and for
// `imgtool fleet check`, so both always agree on the cluster. Pure: the environment comes
// through an EnvLookup (tests and fuzzers pass a map); DetectProcessCluster adds the one
// impure step, checking that the host names it chose resolve.
//
// Precedence (trainer/cluster/README.md has the table of variables):
//   1. TF_CONFIG set: it alone; any cluster flag or IMGTOOL_RENDEZVOUS beside it is an error.
//   2. Slurm: SLURM_PROCID and SLURM_NTASKS, in a task of an srun step. Not when
//      OMPI_COMM_WORLD_RANK/SIZE are also set and disagree (mpirun inside an allocation:
//      Slurm's variables then describe mpirun's daemons, and Open MPI's are ours).
//   3. Open MPI: OMPI_COMM_WORLD_RANK / _SIZE; the rendezvous must be given.
//   4. Kubernetes Indexed Job: JOB_COMPLETION_INDEX, IMGTOOL_WORLD_SIZE, IMGTOOL_K8S_SERVICE.
//   5. Flags: any of --rank, --world-size, --rendezvous, --host given.
//   6. Nothing: one process alone (the trainer) or "which cluster?" (fleet check).
// Under a scheduler (2-4) --rendezvous, else IMGTOOL_RENDEZVOUS, replaces only where the
// chief serves the store, --host only this process's address; --rank and --world-size
// are errors (the scheduler says them).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_config.h"
#include "core/result.h"

namespace trainer {

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// getenv; an empty value reads as unset (as TF_CONFIG= always did).
EnvLookup ProcessEnvironment();
// A fixed map, for tests and fuzzers; empty values read as unset here too.
EnvLookup MapEnvironment(std::map<std::string, std::string> vars);

inline constexpr char kRendezvousVariable[] = "IMGTOOL_RENDEZVOUS";
inline constexpr char kWorldSizeVariable[] = "IMGTOOL_WORLD_SIZE";
inline constexpr char kK8sServiceVariable[] = "IMGTOOL_K8S_SERVICE";
inline constexpr int kK8sStorePort = 2222;
// The most tasks any launcher may declare (the store's WAIT cap, tcp_store.h).
inline constexpr int kMaxWorldSize = 65536;

struct ClusterOverrides {
  int rank = 0;            // --rank
  int world_size = 1;      // --world-size
  std::string rendezvous;  // --rendezvous HOST:PORT
  std::string host;        // --host
  // The cluster flags given, in order ("--rank", "--world-size", "--rendezvous", "--host");
  // only these count, whatever the values above hold.
  std::vector<std::string> given;
  // Nothing at all found: one process alone (the trainer) rather than an error (fleet check).
  bool alone_when_unset = false;
};

// See the top of this file. Errors are kInvalidInput (exit 2) and name the variables.
Result<ClusterConfig> DetectCluster(const EnvLookup& env, const ClusterOverrides& o);

// Launchers that hand out ranks themselves: "slurm", "openmpi", "k8s-indexed-job".
bool UnderScheduler(const ClusterConfig& c);

// The process's own cluster: DetectCluster(ProcessEnvironment()), then, under a
// scheduler, the hosts checked: a Slurm chief node that does not resolve is an error
// (naming --rendezvous / IMGTOOL_RENDEZVOUS); a self_host that does not resolve falls
// back to the chief's host, with a note.
Result<ClusterConfig> DetectProcessCluster(const ClusterOverrides& o);

// The one line rank 0 prints under a scheduler when no job token is set: the store is
// open, and how to close it under this launcher. Empty when there is nothing to say.
std::string OpenStoreWarning(const ClusterConfig& c, bool have_token);

// For the launchers' files: the integer in variable `name`, nullopt when unset; an
// error naming it when it is not a decimal integer in lo..hi.
Result<std::optional<int64_t>> EnvInteger(const EnvLookup& env, const std::string& name, int64_t lo, int64_t hi);

}  // namespace trainer
