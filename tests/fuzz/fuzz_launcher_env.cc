// The launchers' environment (trainer/cluster/launcher.h, DetectCluster): TF_CONFIG,
// Slurm's, Open MPI's and a Kubernetes Indexed Job's variables, which a job's submitter
// sets. The input is the environment, one NAME=VALUE per line (the dictionary holds the
// names). Each is detected four ways: as fleet check (no flags), as the trainer (alone
// when unset), with --rendezvous and --host, and with --rank/--world-size. Checked on
// every accepted cluster: rank inside the world, one task per rank, the world capped,
// a store port when there is more than one task, nodes named for every task or none
// (every worker renders the same report), names that fit a verdict (256 bytes).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

#include "cluster/launcher.h"
#include "fuzz_util.h"

namespace {

std::map<std::string, std::string> Parse(std::string_view text) {
  std::map<std::string, std::string> vars;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    size_t eq = line.find('=');
    if (eq != std::string_view::npos) vars[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    pos = end + 1;
  }
  return vars;
}

void Check(const trainer::EnvLookup& env, const trainer::ClusterOverrides& o) {
  auto c = trainer::DetectCluster(env, o);
  if (!c.ok()) return;
  if (c->world_size < 1 || c->world_size > trainer::kMaxWorldSize) std::abort();
  if (c->rank < 0 || c->rank >= c->world_size) std::abort();
  if (c->tasks.size() != static_cast<size_t>(c->world_size)) std::abort();
  if (c->world_size > 1 && (c->store.host.empty() || c->store.port < 1 || c->store.port > 65535)) std::abort();
  if (c->launcher.empty()) std::abort();
  size_t named = 0;
  for (const auto& t : c->tasks) {
    named += t.node.empty() ? 0 : 1;
    if (t.Label().size() > 256) std::abort();
  }
  if (named != 0 && named != c->tasks.size()) std::abort();
  (void)trainer::OpenStoreWarning(*c, false);
  (void)trainer::WithPortHint(*c, trainer::MakeError(trainer::ErrorKind::kTransport, "x"));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1u << 16)) return 0;  // an environment, not a megabyte of nodes (fuzz_hostlist has those)
  const trainer::EnvLookup env = trainer::MapEnvironment(Parse(imgtool::fuzz::Bytes(data, size)));
  trainer::ClusterOverrides none;
  Check(env, none);
  trainer::ClusterOverrides alone;
  alone.alone_when_unset = true;
  Check(env, alone);
  trainer::ClusterOverrides store;
  store.rendezvous = "127.0.0.1:2222";
  store.host = "10.0.0.9";
  store.given = {"--rendezvous", "--host"};
  Check(env, store);
  trainer::ClusterOverrides ranks;
  ranks.rank = 1;
  ranks.world_size = 3;
  ranks.given = {"--rank", "--world-size"};
  Check(env, ranks);
  return 0;
}
