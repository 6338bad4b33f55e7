// ClusterConfig: who is in the job and which of them we are. Comes from TF_CONFIG (the
// TensorFlow convention: cluster.chief / cluster.worker address lists, task.type /
// task.index), from --rank / --world-size / --rendezvous, or from a scheduler's
// environment (launcher.h, DetectCluster). Pure parsing, no sockets.
// This library (trainer_cluster) is meant to be linked by imgtool's fleet preflight too.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace trainer {

struct HostPort {
  std::string host;  // without IPv6 brackets
  int port = 0;
};

struct ClusterTask {
  std::string type;     // "chief" or "worker" (TF_CONFIG, flags); "rank" under a scheduler
  int index = 0;        // index within its type (under a scheduler: the rank)
  std::string address;  // "host:port" as given; empty when unknown (flags, schedulers)
  std::string node;     // the scheduler's name for its node ("n3", a pod's name); empty when unknown
  // For messages: "chief:0", "worker:1"; under a scheduler "n3 rank 5", or "rank 5".
  std::string Name() const;
  // For reports (fleet check): "chief 0", "worker 1"; under a scheduler as Name().
  std::string Label() const;
};

struct ClusterConfig {
  std::vector<ClusterTask> tasks;  // in rank order: the chief first, then workers
  int rank = 0;
  int world_size = 1;
  HostPort store;         // where the chief serves the rendezvous store
  std::string self_host;  // the address this process binds its Gloo transport to
  // Who said all this: "tf_config", "slurm", "openmpi", "k8s-indexed-job", "flags".
  std::string launcher;
  std::string job_id, step_id;  // the scheduler's ids (Slurm); empty otherwise
  int local_rank = -1;          // among this node's tasks (SLURM_LOCALID...); -1: unknown
  int local_tasks = 0;          // tasks on this node, when the launcher says; 0: unknown
  std::string store_source;     // where store came from, for errors: "SLURM_STEP_NODELIST", "--rendezvous"
  // Said when the chief cannot listen on store.port (a derived port another job may hold).
  std::string port_hint;
  std::vector<std::string> notes;  // what the launcher could not know, for rank 0 to say
};

// "host:port", "[v6]:port". Ports 1..65535.
Result<HostPort> ParseHostPort(const std::string& s);

// TF_CONFIG JSON. Ranks: the "chief" task is rank 0 and workers follow in index order;
// with no chief, worker 0 is the chief (rank 0).
Result<ClusterConfig> ParseTfConfig(const std::string& json);

// --rank / --world-size / --rendezvous HOST:PORT (the chief's store). self_host is
// `host` when given, else the rendezvous host.
Result<ClusterConfig> ClusterFromFlags(int rank, int world_size, const std::string& rendezvous,
                                       const std::string& host);

// The chief could not listen on cluster.store: the error, with cluster.port_hint (how
// the port was chosen, and how to choose another) when there is one.
Error WithPortHint(const ClusterConfig& cluster, Error e);

// Tasks that run on this process's host: local_tasks when the launcher knows it, else
// those whose address's host is self_host. A task with no address (flag mode) counts as
// local: the count errs towards "crowded".
int LocalTasks(const ClusterConfig& cluster);

}  // namespace trainer
