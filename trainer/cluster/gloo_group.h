// GlooGroup: the job's process group. Rank 0 (the chief) serves the TCP store; every rank
// claims its rank there (with the job token when there is one) and announces itself, the
// chief waits (up to the rendezvous timeout) for all tasks and names the ones that never
// arrived, refuses to go on when a rank was claimed twice, then Gloo's full-mesh TCP
// connections are made through the store. World size 1 needs no network and gets no Gloo
// context.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "cluster/cluster_config.h"
#include "cluster/tcp_store.h"
#include "core/result.h"

namespace gloo {
class Context;
}

namespace trainer {

struct GlooGroupOptions {
  std::chrono::milliseconds rendezvous_timeout{std::chrono::seconds(60)};
  std::chrono::milliseconds collective_timeout{std::chrono::seconds(120)};
  // The chief's store reports each peer it refuses or drops here (StoreLimits::log).
  std::function<void(const std::string&)> store_log;
  // The job token (job_token.h): when set, the chief's store admits only processes that
  // prove they hold it, and every rank checks that the store holds it too.
  JobTokenPtr token;
};

class GlooGroup {
 public:
  static Result<std::unique_ptr<GlooGroup>> Join(const ClusterConfig& cluster, const GlooGroupOptions& options);
  ~GlooGroup();

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Null when size() == 1.
  const std::shared_ptr<gloo::Context>& context() const { return context_; }
  const ClusterConfig& cluster() const { return cluster_; }
  // The rendezvous store, for further set-up between the ranks (comm/shm_comm.h); null
  // when size() == 1.
  TcpStoreClient* store() const { return client_.get(); }

 private:
  GlooGroup() = default;

  ClusterConfig cluster_;
  int rank_ = 0;
  int size_ = 1;
  std::unique_ptr<TcpStoreServer> server_;  // the chief only
  std::unique_ptr<TcpStoreClient> client_;
  std::shared_ptr<gloo::Context> context_;
};

}  // namespace trainer
