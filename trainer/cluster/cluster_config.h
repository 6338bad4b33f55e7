// ClusterConfig: who is in the job and which of them we are. Comes from TF_CONFIG (the
// TensorFlow convention: cluster.chief / cluster.worker address lists, task.type /
// task.index) or from --rank / --world-size / --rendezvous. Pure parsing, no sockets.
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
  std::string type;     // "chief" or "worker"
  int index = 0;        // index within its type
  std::string address;  // "host:port" as given; empty when unknown (flag mode)
  std::string Name() const { return type + ":" + std::to_string(index); }
};

struct ClusterConfig {
  std::vector<ClusterTask> tasks;  // in rank order: the chief first, then workers
  int rank = 0;
  int world_size = 1;
  HostPort store;          // where the chief serves the rendezvous store
  std::string self_host;   // the address this process binds its Gloo transport to
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

// Tasks that run on this process's host (their address's host is self_host). A task with
// no address (flag mode) counts as local: the count errs towards "crowded".
int LocalTasks(const ClusterConfig& cluster);

}  // namespace trainer
