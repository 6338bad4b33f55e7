#include "cluster/gloo_group.h"

#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include <exception>

namespace trainer {
namespace {

// Gloo's Store interface throws; our client returns errors. This adapter bridges the two
// for connectFullMesh only, and keeps its keys under "gloo/".
class StoreAdapter : public gloo::rendezvous::Store {
 public:
  explicit StoreAdapter(TcpStoreClient* client, std::chrono::milliseconds timeout)
      : client_(client), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    auto st = client_->Set("gloo/" + key, std::string(data.begin(), data.end()));
    if (!st.ok()) throw gloo::IoException(st.error().message);
  }
  std::vector<char> get(const std::string& key) override {
    wait({key}, timeout_);
    auto v = client_->Get("gloo/" + key);
    if (!v.ok()) throw gloo::IoException(v.error().message);
    if (!v->has_value()) throw gloo::IoException("store key gloo/" + key + " vanished");
    return std::vector<char>((*v)->begin(), (*v)->end());
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    std::vector<std::string> full;
    for (const auto& k : keys) full.push_back("gloo/" + k);
    auto st = client_->Wait(full, timeout);
    if (!st.ok()) throw gloo::IoException(st.error().message);
  }

 private:
  TcpStoreClient* client_;
  std::chrono::milliseconds timeout_;
};

std::string ArriveKey(int rank) { return "arrive/" + std::to_string(rank); }

// Gloo's full mesh stores, per rank, its listening address for every peer: a
// gloo::transport::tcp::Address (sockaddr_storage + sequence number) each.
constexpr uint64_t kGlooAddressBytes = 136;

// The store's limits for this job: the defaults, plus room for Gloo's N^2 addresses
// (twice over, for the bookkeeping) so a large world is never cut short by them.
StoreLimits ChiefStoreLimits(int size, const GlooGroupOptions& options) {
  StoreLimits limits = StoreLimits::ForTasks(size);
  const uint64_t n = static_cast<uint64_t>(size);
  limits.max_held_bytes += 2 * kGlooAddressBytes * n * n;
  limits.log = options.store_log;
  return limits;
}

}  // namespace

GlooGroup::~GlooGroup() {
  context_.reset();  // close Gloo pairs before the store goes away
  client_.reset();
  server_.reset();
}

Result<std::unique_ptr<GlooGroup>> GlooGroup::Join(const ClusterConfig& cluster, const GlooGroupOptions& options) {
  std::unique_ptr<GlooGroup> g(new GlooGroup());
  g->cluster_ = cluster;
  g->rank_ = cluster.rank;
  g->size_ = cluster.world_size;
  if (g->size_ == 1) return g;

  const std::string me = cluster.tasks[static_cast<size_t>(cluster.rank)].Name();
  if (g->rank_ == 0) {
    auto server = TcpStoreServer::Start(cluster.store.host, cluster.store.port, ChiefStoreLimits(g->size_, options));
    if (!server.ok()) return server.error().Context("rendezvous (chief " + me + ")");
    g->server_ = std::move(*server);
  }
  auto client = TcpStoreClient::Connect(cluster.store.host, cluster.store.port, options.rendezvous_timeout);
  if (!client.ok()) return client.error().Context("rendezvous (" + me + ")");
  g->client_ = std::move(*client);
  TRAINER_TRY(g->client_->Set(ArriveKey(g->rank_), me));

  // The chief waits for everyone and says who is missing; the others wait for its word.
  if (g->rank_ == 0) {
    std::vector<std::string> keys, missing;
    for (int r = 0; r < g->size_; ++r) keys.push_back(ArriveKey(r));
    auto st = g->client_->Wait(keys, options.rendezvous_timeout, &missing);
    if (!st.ok() && !missing.empty()) {
      std::string names;
      for (const auto& k : missing) {
        int r = std::stoi(k.substr(k.find('/') + 1));
        const ClusterTask& t = cluster.tasks[static_cast<size_t>(r)];
        names += (names.empty() ? "" : ", ") + t.Name() + " (rank " + std::to_string(r) +
                 (t.address.empty() ? "" : ", " + t.address) + ")";
      }
      char secs[32];
      std::snprintf(secs, sizeof(secs), "%g", static_cast<double>(options.rendezvous_timeout.count()) / 1000.0);
      return MakeError(ErrorKind::kNotFound, "rendezvous: after " + std::string(secs) +
                                                 "s (--rendezvous-timeout) still missing " + names);
    }
    if (!st.ok()) return st.error().Context("rendezvous");
    TRAINER_TRY(g->client_->Set("go", "1"));
  } else {
    auto st = g->client_->Wait({"go"}, options.rendezvous_timeout);
    if (!st.ok()) {
      return MakeError(ErrorKind::kNotFound, "rendezvous (" + me +
                                                 "): the group did not form before --rendezvous-timeout; "
                                                 "the chief's log names the missing task");
    }
  }

  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = cluster.self_host;
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(g->rank_, g->size_);
    ctx->setTimeout(options.collective_timeout);
    StoreAdapter store(g->client_.get(), options.rendezvous_timeout);
    ctx->connectFullMesh(store, device);
    g->context_ = ctx;
  } catch (const std::exception& e) {
    return MakeError(ErrorKind::kTransport, "rendezvous (" + me + "): connecting Gloo: " + e.what());
  }
  return g;
}

}  // namespace trainer
