#include "cluster/gloo_group.h"

#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <exception>
#include <string_view>

namespace trainer {
namespace {

// Gloo names each key it stores after the rank that writes it (gloo/rendezvous/context.cc,
// connectFullMesh: "rank_<r>" its host name, "<r>" its pair addresses); under "gloo/"
// they become keys the store binds to that rank (store_keys.h): "gloo/host/<r>",
// "gloo/addr/<r>". Any other key stays "gloo/<key>", the chief's, so a Gloo that wrote
// other keys from every rank would fail loudly at the rendezvous (gloo_group_test).
std::string GlooKey(const std::string& key) {
  auto digits = [](std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  constexpr std::string_view kHost = "rank_";
  if (key.rfind(kHost, 0) == 0 && digits(std::string_view(key).substr(kHost.size()))) {
    return "gloo/host/" + key.substr(kHost.size());
  }
  if (digits(key)) return "gloo/addr/" + key;
  return "gloo/" + key;
}

// Gloo's Store interface throws; our client returns errors. This adapter bridges the two
// for connectFullMesh only.
class StoreAdapter : public gloo::rendezvous::Store {
 public:
  explicit StoreAdapter(TcpStoreClient* client, std::chrono::milliseconds timeout)
      : client_(client), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    auto st = client_->Set(GlooKey(key), std::string(data.begin(), data.end()));
    if (!st.ok()) throw gloo::IoException(st.error().message);
  }
  std::vector<char> get(const std::string& key) override {
    wait({key}, timeout_);
    auto v = client_->Get(GlooKey(key));
    if (!v.ok()) throw gloo::IoException(v.error().message);
    if (!v->has_value()) throw gloo::IoException("store key " + GlooKey(key) + " vanished");
    return std::vector<char>((*v)->begin(), (*v)->end());
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    std::vector<std::string> full;
    for (const auto& k : keys) full.push_back(GlooKey(k));
    auto st = client_->Wait(full, timeout);
    if (!st.ok()) throw gloo::IoException(st.error().message);
  }

 private:
  TcpStoreClient* client_;
  std::chrono::milliseconds timeout_;
};

std::string ArriveKey(int rank) { return "arrive/" + std::to_string(rank); }
// The chief's word: kGo, or why the group must not form. When it refuses, each rank
// acknowledges the reason (ack/<rank>) so the chief keeps its store up until they have
// read it, kRefusalGrace at most.
constexpr char kGoKey[] = "go";
constexpr char kGo[] = "1";
std::string AckKey(int rank) { return "ack/" + std::to_string(rank); }
constexpr auto kRefusalGrace = std::chrono::seconds(5);

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
    auto server = TcpStoreServer::Start(cluster.store.host, cluster.store.port, ChiefStoreLimits(g->size_, options),
                                        StoreAccess{g->size_, options.token});
    if (!server.ok()) return WithPortHint(cluster, server.error().Context("rendezvous (chief " + me + ")"));
    g->server_ = std::move(*server);
  }
  auto client = TcpStoreClient::Connect(cluster.store.host, cluster.store.port, options.rendezvous_timeout,
                                        g->server_ ? g->server_->ChiefClaim() : StoreClaim(g->rank_, options.token));
  if (!client.ok()) return client.error().Context("rendezvous (" + me + ")");
  g->client_ = std::move(*client);
  auto arrived = g->client_->Publish(ArriveKey(g->rank_), me);
  if (!arrived.ok()) return arrived.error().Context("rendezvous (" + me + ")");

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
      return MakeError(ErrorKind::kNotFound,
                       "rendezvous: after " + std::string(secs) + "s (--rendezvous-timeout) still missing " + names);
    }
    if (!st.ok()) return st.error().Context("rendezvous");
    // Every rank arrived, but a rank claimed twice means two processes believe they are
    // one task (or an outsider took a place): the group must not form.
    std::string conflicts;
    for (const auto& line : g->server_->conflicts()) conflicts += (conflicts.empty() ? "" : "; ") + line;
    if (!conflicts.empty()) {
      (void)g->client_->Set(kGoKey, conflicts);  // the workers stop waiting, with the reason
      std::vector<std::string> acks;
      for (int r = 1; r < g->size_; ++r) acks.push_back(AckKey(r));
      (void)g->client_->Wait(acks, std::min<std::chrono::milliseconds>(options.rendezvous_timeout, kRefusalGrace));
      return MakeError(ErrorKind::kDenied, "rendezvous: " + conflicts);
    }
    TRAINER_TRY(g->client_->Set(kGoKey, kGo));
  } else {
    auto st = g->client_->Wait({kGoKey}, options.rendezvous_timeout);
    if (!st.ok()) {
      return MakeError(ErrorKind::kNotFound, "rendezvous (" + me +
                                                 "): the group did not form before --rendezvous-timeout; "
                                                 "the chief's log names the missing task");
    }
    auto go = g->client_->Get(kGoKey);
    if (!go.ok()) return go.error().Context("rendezvous (" + me + ")");
    if (!go->has_value() || **go != kGo) {
      (void)g->client_->Set(AckKey(g->rank_), "1");
      return MakeError(ErrorKind::kDenied, "rendezvous (" + me + "): the chief refused to form the group: " +
                                               (go->has_value() ? **go : std::string("no reason given")));
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
