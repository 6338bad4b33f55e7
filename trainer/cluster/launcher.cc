#include "cluster/launcher.h"

#include <netdb.h>

#include <cstdlib>

#include "cluster/slurm.h"

namespace trainer {
namespace {

Error Invalid(const std::string& msg) { return MakeError(ErrorKind::kInvalidInput, msg); }

// Where the chief serves the store when the user says: --rendezvous, else IMGTOOL_RENDEZVOUS.
struct StoreOverride {
  std::optional<HostPort> store;
  std::string source;
};

Result<StoreOverride> ReadStoreOverride(const EnvLookup& env, const ClusterOverrides& o) {
  StoreOverride out;
  std::string text = o.rendezvous;
  out.source = "--rendezvous";
  if (text.empty()) {
    text = env(kRendezvousVariable).value_or("");
    out.source = kRendezvousVariable;
  }
  if (text.empty()) return out;
  auto hp = ParseHostPort(text);
  if (!hp.ok()) return hp.error().Context(out.source);
  out.store = *hp;
  return out;
}

bool Given(const ClusterOverrides& o, const std::string& flag) {
  for (const auto& g : o.given) {
    if (g == flag) return true;
  }
  return false;
}

Result<ClusterConfig> FromTfConfig(const EnvLookup& env, const std::string& tf, const ClusterOverrides& o) {
  if (!o.given.empty()) {
    return Invalid("TF_CONFIG is set and so is " + o.given[0] +
                   ": TF_CONFIG names every task and its address; give one or the other");
  }
  if (env(kRendezvousVariable)) {
    return Invalid(std::string("TF_CONFIG is set and so is ") + kRendezvousVariable +
                   ": TF_CONFIG names the chief's address; give one or the other");
  }
  auto c = ParseTfConfig(tf);
  // The parser names TF_CONFIG itself in most messages; say it once.
  if (!c.ok() && c.error().message.rfind("TF_CONFIG", 0) != 0) return c.error().Context("TF_CONFIG");
  return c;
}

// Open MPI's mpirun: ranks, no address for rank 0.
Result<ClusterConfig> OpenMpiCluster(const EnvLookup& env, const StoreOverride& so) {
  auto rank = EnvInteger(env, "OMPI_COMM_WORLD_RANK", 0, kMaxWorldSize - 1);
  if (!rank.ok()) return rank.error().Context("Open MPI");
  auto world = EnvInteger(env, "OMPI_COMM_WORLD_SIZE", 1, kMaxWorldSize);
  if (!world.ok()) return world.error().Context("Open MPI");
  if (!*rank || !*world) return Invalid("Open MPI: OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE must both be set");
  if (**rank >= **world) {
    return Invalid("Open MPI: OMPI_COMM_WORLD_RANK " + std::to_string(**rank) + " is outside 0.." +
                   std::to_string(**world - 1));
  }
  auto local = EnvInteger(env, "OMPI_COMM_WORLD_LOCAL_RANK", 0, kMaxWorldSize - 1);
  if (!local.ok()) return local.error().Context("Open MPI");
  auto local_size = EnvInteger(env, "OMPI_COMM_WORLD_LOCAL_SIZE", 1, kMaxWorldSize);
  if (!local_size.ok()) return local_size.error().Context("Open MPI");
  ClusterConfig c;
  c.launcher = "openmpi";
  c.rank = static_cast<int>(**rank);
  c.world_size = static_cast<int>(**world);
  c.local_rank = local->value_or(-1);
  c.local_tasks = static_cast<int>(local_size->value_or(0));
  for (int r = 0; r < c.world_size; ++r) c.tasks.push_back({"rank", r, "", ""});
  if (so.store) {
    c.store = *so.store;
    c.store_source = so.source;
  } else if (c.world_size > 1) {
    return Invalid("Open MPI (OMPI_COMM_WORLD_RANK " + std::to_string(c.rank) + " of " + std::to_string(c.world_size) +
                   "): mpirun tells no task where rank 0 runs: pass --rendezvous HOST:PORT (rank 0's host, a free "
                   "port), or IMGTOOL_RENDEZVOUS=HOST:PORT with mpirun -x IMGTOOL_RENDEZVOUS");
  }
  c.self_host = c.store.host;
  return c;
}

bool IsDnsLabel(const std::string& s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  return s.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos;
}

// A Kubernetes Indexed Job: the pod's completion index is its rank; pod i's hostname is
// "<job>-<i>", reachable as "<job>-<i>.<service>" through the Job's headless Service.
Result<ClusterConfig> K8sCluster(const EnvLookup& env, const StoreOverride& so) {
  auto index = EnvInteger(env, "JOB_COMPLETION_INDEX", 0, kMaxWorldSize - 1);
  if (!index.ok()) return index.error().Context("Kubernetes Indexed Job");
  auto world = EnvInteger(env, kWorldSizeVariable, 1, kMaxWorldSize);
  if (!world.ok()) return world.error().Context("Kubernetes Indexed Job");
  const std::string where = "Kubernetes Indexed Job (JOB_COMPLETION_INDEX " + std::to_string(index->value_or(0)) + ")";
  if (!*world) return Invalid(where + ": IMGTOOL_WORLD_SIZE is unset: set it to the Job's completions");
  ClusterConfig c;
  c.launcher = "k8s-indexed-job";
  c.rank = static_cast<int>(index->value_or(0));
  c.world_size = static_cast<int>(**world);
  if (c.rank >= c.world_size) {
    return Invalid(where + " is outside 0.." + std::to_string(c.world_size - 1) + " (IMGTOOL_WORLD_SIZE)");
  }
  const std::string hostname = env("HOSTNAME").value_or("");
  const std::string suffix = "-" + std::to_string(c.rank);
  const bool named = hostname.size() > suffix.size() && hostname.size() <= 63 && IsDnsLabel(hostname) &&
                     hostname.compare(hostname.size() - suffix.size(), suffix.size(), suffix) == 0;
  const std::string job = named ? hostname.substr(0, hostname.size() - suffix.size()) : "";
  for (int r = 0; r < c.world_size; ++r) {
    // Every pod or none named: each worker's report is rendered from its own list.
    c.tasks.push_back({"rank", r, "", job.empty() ? "" : job + "-" + std::to_string(r)});
  }
  c.local_tasks = 1;  // a pod is one task
  const std::string service = env(kK8sServiceVariable).value_or("");
  if (!service.empty() && !IsDnsLabel(service)) {
    return Invalid(where + ": IMGTOOL_K8S_SERVICE \"" + service + "\" is not a Service name (a DNS label)");
  }
  if (so.store) {
    c.store = *so.store;
    c.store_source = so.source;
  } else if (c.world_size > 1) {
    if (job.empty() || service.empty()) {
      return Invalid(where + ": the chief is \"<job>-0.<service>\": it needs HOSTNAME \"<job>-" +
                     std::to_string(c.rank) + "\" (it is \"" + hostname.substr(0, 64) +
                     "\") and IMGTOOL_K8S_SERVICE, the Job's headless Service; or set --rendezvous / "
                     "IMGTOOL_RENDEZVOUS");
    }
    c.store = {job + "-0." + service, kK8sStorePort};
    c.store_source = kK8sServiceVariable;
  }
  // The pod's own name resolves inside it (the kubelet writes it into /etc/hosts).
  c.self_host = hostname.empty() ? c.store.host : hostname;
  return c;
}

// Slurm's variables describe this process unless mpirun started it inside an allocation.
bool SlurmIsOurs(const EnvLookup& env) {
  if (!SlurmPresent(env)) return false;
  if (!env("OMPI_COMM_WORLD_RANK") && !env("OMPI_COMM_WORLD_SIZE")) return true;
  return env("OMPI_COMM_WORLD_RANK") == env("SLURM_PROCID") && env("OMPI_COMM_WORLD_SIZE") == env("SLURM_NTASKS");
}

// The launchers that hand out ranks; nullopt when none of them started this process.
std::optional<Result<ClusterConfig>> FromScheduler(const EnvLookup& env, const StoreOverride& so) {
  if (SlurmIsOurs(env) && !SlurmOutsideStep(env)) return SlurmCluster(env, so.store, so.source);
  if (env("OMPI_COMM_WORLD_RANK") || env("OMPI_COMM_WORLD_SIZE")) {
    auto c = OpenMpiCluster(env, so);
    if (c.ok() && SlurmPresent(env)) {
      c->notes.emplace_back(
          "Open MPI inside a Slurm allocation: Slurm's SLURM_PROCID/SLURM_NTASKS describe mpirun's "
          "daemons, so OMPI_COMM_WORLD_* give the rank");
    }
    return c;
  }
  if (env("JOB_COMPLETION_INDEX")) return K8sCluster(env, so);
  return std::nullopt;
}

std::string Launchers() {
  return "TF_CONFIG; Slurm's srun (SLURM_PROCID, SLURM_NTASKS); Open MPI's mpirun (OMPI_COMM_WORLD_RANK, with "
         "--rendezvous); a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, IMGTOOL_WORLD_SIZE, IMGTOOL_K8S_SERVICE); "
         "or --rank R --world-size N --rendezvous HOST:PORT";
}

bool Resolves(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0) return false;
  freeaddrinfo(res);
  return true;
}

}  // namespace

EnvLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
}

EnvLookup MapEnvironment(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end() || it->second.empty()) return std::nullopt;
    return it->second;
  };
}

Result<std::optional<int64_t>> EnvInteger(const EnvLookup& env, const std::string& name, int64_t lo, int64_t hi) {
  auto v = env(name);
  if (!v) return std::optional<int64_t>();
  if (v->size() > 18 || v->find_first_not_of("0123456789") != std::string::npos) {
    return Invalid(name + " \"" + v->substr(0, 32) + "\" is not a decimal integer");
  }
  const int64_t n = std::stoll(*v);
  if (n < lo || n > hi) {
    return Invalid(name + " " + *v + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
  }
  return std::optional<int64_t>(n);
}

Result<ClusterConfig> DetectCluster(const EnvLookup& env, const ClusterOverrides& o) {
  if (auto tf = env("TF_CONFIG")) return FromTfConfig(env, *tf, o);
  auto so = ReadStoreOverride(env, o);
  if (!so.ok()) return so.error();
  if (auto c = FromScheduler(env, *so)) {
    if (!c->ok()) return *c;
    for (const char* flag : {"--rank", "--world-size"}) {
      if (Given(o, flag)) {
        return Invalid(std::string(flag) + " is for starting tasks by hand: " + (*c)->launcher +
                       " gives this task rank " + std::to_string((*c)->rank) + " of " +
                       std::to_string((*c)->world_size));
      }
    }
    if (Given(o, "--host")) (*c)->self_host = o.host;
    return *c;
  }
  if (!o.given.empty()) {
    const std::string rendezvous = o.rendezvous.empty() ? env(kRendezvousVariable).value_or("") : o.rendezvous;
    auto c = ClusterFromFlags(o.rank, o.world_size, rendezvous, o.host);
    if (c.ok() && so->store) c->store_source = so->source;
    return c;
  }
  if (SlurmPresent(env)) {
    return Invalid("SLURM_PROCID is set, but this is " + SlurmOutsideStep(env).value_or("not srun's task") +
                   ", not a task of an srun step: start it with srun (or give --rank/--world-size/--rendezvous)");
  }
  if (o.alone_when_unset) return ClusterFromFlags(0, 1, "", "");
  return Invalid("which cluster? None of the launchers is here: " + Launchers());
}

bool UnderScheduler(const ClusterConfig& c) {
  return c.launcher == "slurm" || c.launcher == "openmpi" || c.launcher == "k8s-indexed-job";
}

Result<ClusterConfig> DetectProcessCluster(const ClusterOverrides& o) {
  auto c = DetectCluster(ProcessEnvironment(), o);
  if (!c.ok() || !UnderScheduler(*c) || c->world_size == 1) return c;
  if (c->launcher == "slurm" && c->store_source.rfind("SLURM_", 0) == 0 && !Resolves(c->store.host)) {
    return Invalid("Slurm: the chief's node " + c->store.host + " (the first of " + c->store_source +
                   ") does not resolve here: set --rendezvous HOST:PORT or IMGTOOL_RENDEZVOUS");
  }
  if (!c->self_host.empty() && c->self_host != c->store.host && !Resolves(c->self_host)) {
    c->notes.push_back("this task's host " + c->self_host + " does not resolve; binding to the chief's host " +
                       c->store.host + " instead (set --host)");
    c->self_host = c->store.host;
  }
  return c;
}

std::string OpenStoreWarning(const ClusterConfig& c, bool have_token) {
  if (have_token || !UnderScheduler(c) || c.rank != 0 || c.world_size == 1) return "";
  std::string how =
      "export IMGTOOL_FLEET_TOKEN=$(openssl rand -hex 32) before srun (srun passes it to the job's "
      "tasks only)";
  if (c.launcher == "openmpi")
    how = "export IMGTOOL_FLEET_TOKEN=$(openssl rand -hex 32) and mpirun -x IMGTOOL_FLEET_TOKEN";
  if (c.launcher == "k8s-indexed-job") how = "set IMGTOOL_FLEET_TOKEN from a Secret (valueFrom.secretKeyRef)";
  return "warning: the rendezvous store at " + c.store.host + ":" + std::to_string(c.store.port) +
         " is open to any process that reaches it (no IMGTOOL_FLEET_TOKEN); to close it, " + how;
}

}  // namespace trainer
