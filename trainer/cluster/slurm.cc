#include "cluster/slurm.h"

#include <algorithm>

#include "cluster/hostlist.h"

namespace trainer {
namespace {

Error Invalid(const std::string& msg) { return MakeError(ErrorKind::kInvalidInput, "Slurm: " + msg); }

std::string Get(const EnvLookup& env, const std::string& name) { return env(name).value_or(""); }

// SLURM_STEP_ID, or the older SLURM_STEPID.
std::string StepVariable(const EnvLookup& env) {
  auto v = env("SLURM_STEP_ID");
  return v ? *v : Get(env, "SLURM_STEPID");
}
std::string JobVariable(const EnvLookup& env) {
  auto v = env("SLURM_JOB_ID");
  return v ? *v : Get(env, "SLURM_JOBID");
}

bool IsDecimal(const std::string& s) {
  return !s.empty() && s.size() <= 10 && s.find_first_not_of("0123456789") == std::string::npos;
}

// The nodes, their task counts and the distribution as srun gave them, or the job's
// (with a note) when the step's are unset.
struct NodeFacts {
  std::vector<std::string> nodes;
  std::vector<int> counts;  // empty: unknown
  std::string nodes_source, distribution;
  bool step_level = true;
};

Result<NodeFacts> ReadNodes(const EnvLookup& env, int world, std::vector<std::string>* notes) {
  NodeFacts f;
  for (const char* name : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
    if (env(name)) {
      f.nodes_source = name;
      break;
    }
  }
  if (f.nodes_source.empty()) return f;
  f.step_level = f.nodes_source == "SLURM_STEP_NODELIST";
  auto nodes = ExpandHostlist(Get(env, f.nodes_source));
  if (!nodes.ok()) return nodes.error().Context("Slurm: " + f.nodes_source);
  f.nodes = std::move(*nodes);
  std::vector<std::string> sorted = f.nodes;
  std::sort(sorted.begin(), sorted.end());
  if (auto d = std::adjacent_find(sorted.begin(), sorted.end()); d != sorted.end()) {
    return Invalid(f.nodes_source + " names node " + *d + " twice");
  }
  if (!f.step_level) {
    notes->push_back("Slurm: SLURM_STEP_NODELIST is unset: the chief is taken to be on the first node of " +
                     f.nodes_source + "; tasks are named by rank alone");
    return f;
  }
  f.distribution = Get(env, "SLURM_DISTRIBUTION");
  auto per_node = env("SLURM_STEP_TASKS_PER_NODE");
  if (!per_node) {
    notes->push_back("Slurm: SLURM_STEP_TASKS_PER_NODE is unset: tasks are named by rank alone");
    return f;
  }
  auto counts = ExpandTaskCounts(*per_node, world);
  if (!counts.ok()) return counts.error().Context("Slurm: SLURM_STEP_TASKS_PER_NODE");
  f.counts = std::move(*counts);
  return f;
}

// Fills tasks[].node, self_host, local_tasks and checks SLURMD_NODENAME against the layout.
Status PlaceTasks(const EnvLookup& env, const NodeFacts& f, ClusterConfig* c) {
  const std::string own = Get(env, "SLURMD_NODENAME");
  std::optional<std::vector<std::string>> placed;
  if (!f.counts.empty()) {
    auto p = SlurmNodesOfRanks(f.nodes, f.counts, f.distribution, c->world_size);
    if (!p.ok()) return p.error();
    placed = std::move(*p);
    if (!placed) {
      c->notes.push_back("Slurm: SLURM_DISTRIBUTION=" + f.distribution +
                         ": only each task's own node is known (SLURMD_NODENAME), so tasks are named by rank alone");
    }
  }
  if (placed) {
    const std::string& mine = (*placed)[static_cast<size_t>(c->rank)];
    if (!own.empty() && own != mine) {
      return Invalid("SLURMD_NODENAME is " + own + ", but SLURM_STEP_NODELIST, SLURM_STEP_TASKS_PER_NODE and " +
                     "SLURM_DISTRIBUTION put rank " + std::to_string(c->rank) + " on " + mine);
    }
    for (int r = 0; r < c->world_size; ++r) c->tasks[static_cast<size_t>(r)].node = (*placed)[static_cast<size_t>(r)];
    c->local_tasks = static_cast<int>(std::count(placed->begin(), placed->end(), mine));
  } else {
    // Every task or none is named by its node: each worker renders the fleet check's
    // report from its own list, and all reports must be the same.
    if (!f.nodes.empty() && !f.counts.empty()) {
      auto at = std::find(f.nodes.begin(), f.nodes.end(), own);
      if (at != f.nodes.end()) c->local_tasks = f.counts[static_cast<size_t>(at - f.nodes.begin())];
    }
  }
  c->self_host = !own.empty() ? own : c->tasks[static_cast<size_t>(c->rank)].node;
  return {};
}

// Slurm 22.05 starts an `srun --container` step's containers without the task's
// SLURM_PROCID; examples/slurm/oci-run gives each its node (SLURMD_NODENAME) and
// node-local id (SLURM_LOCALID), from which the layout gives the rank: the
// SLURM_LOCALID-th task placed on that node.
Result<int> RankFromNodeAndLocalId(const EnvLookup& env, const NodeFacts& f, int world) {
  const std::string own = Get(env, "SLURMD_NODENAME");
  auto local = EnvInteger(env, "SLURM_LOCALID", 0, kMaxWorldSize - 1);
  if (!local.ok()) return local.error().Context("Slurm");
  const std::string why =
      "SLURM_PROCID is unset (Slurm 22.05 passes no task variables into an srun --container step: run the "
      "containers through examples/slurm/oci-run, which gives each task SLURMD_NODENAME and SLURM_LOCALID)";
  if (own.empty() || !*local) return Invalid(why);
  if (f.counts.empty()) return Invalid(why + ", and without SLURM_STEP_TASKS_PER_NODE the rank cannot be derived");
  auto placed = SlurmNodesOfRanks(f.nodes, f.counts, f.distribution, world);
  if (!placed.ok()) return placed.error();
  if (!*placed) return Invalid(why + ", and SLURM_DISTRIBUTION=" + f.distribution + " hides which rank it is");
  int seen = 0;
  for (int r = 0; r < world; ++r) {
    if ((**placed)[static_cast<size_t>(r)] == own && seen++ == **local) return r;
  }
  return Invalid("SLURM_LOCALID " + std::to_string(**local) + " on " + own + ": the step places fewer tasks there");
}

}  // namespace

int SlurmStorePort(uint64_t job_id, uint64_t step_id) {
  return kSlurmPortBase + static_cast<int>(job_id % 1024) * 16 + static_cast<int>(step_id % 16);
}

bool SlurmPresent(const EnvLookup& env) {
  return env("SLURM_NTASKS") && (env("SLURM_PROCID") || env("SLURM_STEP_NODELIST"));
}

std::optional<std::string> SlurmOutsideStep(const EnvLookup& env) {
  const std::string job = JobVariable(env), step = StepVariable(env);
  const std::string of_job = job.empty() ? "" : " of job " + job;
  if (step.empty())
    return "a shell of the allocation" + of_job + " (SLURM_STEP_ID is unset: its batch script or salloc)";
  if (step == "batch" || step == "extern" || step == "interactive") return "the " + step + " step" + of_job;
  if (IsDecimal(step) && std::stoull(step) > kSlurmMaxNormalStep) {
    return "step " + step + of_job + " (a batch, extern or interactive step, not srun's)";
  }
  return std::nullopt;
}

Result<std::optional<std::vector<std::string>>> SlurmNodesOfRanks(const std::vector<std::string>& nodes,
                                                                  const std::vector<int>& tasks_per_node,
                                                                  std::string_view distribution, int world) {
  if (tasks_per_node.size() != nodes.size()) {
    return Invalid("SLURM_STEP_TASKS_PER_NODE gives " + std::to_string(tasks_per_node.size()) +
                   " nodes, SLURM_STEP_NODELIST " + std::to_string(nodes.size()));
  }
  int64_t sum = 0;
  for (int n : tasks_per_node) sum += n;
  if (sum != world) {
    return Invalid("SLURM_STEP_TASKS_PER_NODE adds up to " + std::to_string(sum) + " tasks, SLURM_NTASKS is " +
                   std::to_string(world));
  }
  // The node level is the first part: "block:cyclic" places tasks on nodes by block.
  std::string_view kind = distribution.substr(0, distribution.find_first_of(":,"));
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(world));
  if (kind.empty() || kind == "block") {
    for (size_t i = 0; i < nodes.size(); ++i) out.insert(out.end(), static_cast<size_t>(tasks_per_node[i]), nodes[i]);
  } else if (kind == "cyclic") {
    // One task per node per round, skipping the nodes that are full.
    for (int round = 0; static_cast<int>(out.size()) < world; ++round) {
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (tasks_per_node[i] > round) out.push_back(nodes[i]);
      }
    }
  } else {
    return std::optional<std::vector<std::string>>();
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

Result<ClusterConfig> SlurmCluster(const EnvLookup& env, const std::optional<HostPort>& store,
                                   const std::string& store_source) {
  auto rank = EnvInteger(env, "SLURM_PROCID", 0, kMaxWorldSize - 1);
  if (!rank.ok()) return rank.error().Context("Slurm");
  auto world = EnvInteger(env, "SLURM_NTASKS", 1, kMaxWorldSize);
  if (!world.ok()) return world.error().Context("Slurm");
  if (!*world) return Invalid("SLURM_NTASKS must be set");
  std::vector<std::string> notes;
  auto facts = ReadNodes(env, static_cast<int>(**world), &notes);
  if (!facts.ok()) return facts.error();
  if (!*rank) {
    auto derived = RankFromNodeAndLocalId(env, *facts, static_cast<int>(**world));
    if (!derived.ok()) return derived.error();
    *rank = *derived;
    notes.push_back("Slurm: rank " + std::to_string(*derived) + " derived from SLURMD_NODENAME and SLURM_LOCALID " +
                    "(no SLURM_PROCID: a container step)");
  }
  if (**rank >= **world) {
    return Invalid("SLURM_PROCID " + std::to_string(**rank) + " is outside 0.." + std::to_string(**world - 1) +
                   " (SLURM_NTASKS " + std::to_string(**world) + ")");
  }
  const std::string job = JobVariable(env), step = StepVariable(env);
  if (!IsDecimal(job)) return Invalid("SLURM_JOB_ID \"" + job + "\" is not a job id");
  if (!IsDecimal(step)) return Invalid("SLURM_STEP_ID \"" + step + "\" is not a step id");
  ClusterConfig c;
  c.launcher = "slurm";
  c.job_id = job;
  c.step_id = step;
  c.rank = static_cast<int>(**rank);
  c.world_size = static_cast<int>(**world);
  for (int r = 0; r < c.world_size; ++r) c.tasks.push_back({"rank", r, "", ""});
  auto local = EnvInteger(env, "SLURM_LOCALID", 0, kMaxWorldSize - 1);
  if (!local.ok()) return local.error().Context("Slurm");
  c.local_rank = local->value_or(-1);
  c.notes = std::move(notes);
  IMGTOOL_TRY(PlaceTasks(env, *facts, &c));
  if (store) {
    c.store = *store;
    c.store_source = store_source;
  } else if (c.world_size > 1) {
    if (facts->nodes.empty()) {
      return Invalid(
          "no SLURM_STEP_NODELIST (nor SLURM_JOB_NODELIST): which node is the chief's? Set --rendezvous "
          "HOST:PORT or IMGTOOL_RENDEZVOUS");
    }
    c.store = {facts->nodes[0], SlurmStorePort(std::stoull(job), std::stoull(step))};
    c.store_source = facts->nodes_source;
    c.port_hint = "port " + std::to_string(c.store.port) + " is job " + job + " step " + step + "'s under Slurm (" +
                  std::to_string(kSlurmPortBase) + " + (job mod 1024) * 16 + (step mod 16)); a job or step whose ids " +
                  "match mod 1024 and 16 may hold it: set --rendezvous HOST:PORT or IMGTOOL_RENDEZVOUS";
  }
  if (c.self_host.empty()) c.self_host = c.store.host;
  return c;
}

}  // namespace trainer
