// imgtool fleet check: this node's fingerprint (probe, or --fingerprint FILE) [+ golden
// run] -> digest -> gather over the chief's rendezvous store -> compare (the chief) ->
// the same verdict on every worker -> report, exit 0 / 1 / 3. Run by every worker of a
// training job before the trainer (a Kubernetes init container), with its TF_CONFIG.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/common.h"
#include "cluster/cluster_config.h"
#include "cluster/job_token.h"
#include "cluster/launcher.h"
#include "fleet/compare.h"
#include "fleet/drain.h"
#include "fleet/drain_exec.h"
#include "fleet/fingerprint.h"
#include "fleet/gather.h"
#include "fleet/golden_run.h"
#include "fleet/probe.h"
#include "fs/atomic_file.h"

namespace imgtool::cli {

namespace {

struct CheckFlags {
  bool json = false;
  double timeout_s = 60;
  int rank = 0;
  int world_size = 1;
  std::string rendezvous, host;
  std::string expect;
  std::vector<std::string> ignore;
  bool golden_run = false;
  int golden_steps = fleet::GoldenRunOptions{}.steps;
  std::string fingerprint;
  std::string image_digest;
  std::string image_index;
  std::string stack_json = fleet::ProbeOptions{}.stack_json_path;
  std::string hash_cache;
  bool no_hash_cache = false;
  std::string on_mismatch = "report";  // or "drain" (Slurm)
  bool perf = false, perf_warn = false;
  double perf_threshold = fleet::kPerfDefaultThresholdPermille / 1000.0;
  // Which cluster flags were given (TF_CONFIG and these exclude each other).
  std::vector<std::string> cluster_flags;
};

std::string Fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, x);
  return buf;
}

// The cluster the trainer will see, by the trainer's own rule (trainer/cluster/launcher.h):
// TF_CONFIG, Slurm, Open MPI, a Kubernetes Indexed Job, or the flags. Rank 0 says what the
// launcher could not know, and that the store is open when a scheduler started us without
// a job token (the token itself is read, and its errors reported, by RunCheck).
Result<trainer::ClusterConfig> Cluster(const CheckFlags& f) {
  trainer::ClusterOverrides o;
  o.rank = f.rank;
  o.world_size = f.world_size;
  o.rendezvous = f.rendezvous;
  o.host = f.host;
  o.given = f.cluster_flags;
  auto c = trainer::DetectProcessCluster(o);
  if (!c.ok() || c->rank != 0) return c;
  for (const auto& n : c->notes) PrintLine("imgtool: note: ", n);
  auto token = trainer::FindJobToken(trainer::DefaultTokenSources());
  const std::string warning = trainer::OpenStoreWarning(*c, !token.ok() || *token != nullptr);
  if (!warning.empty()) PrintLine("imgtool: fleet check: ", warning);
  return c;
}

// This node's fingerprint: read from --fingerprint, or probed here.
Result<fleet::Fingerprint> Mine(const CheckFlags& f, double* probe_ms) {
  if (!f.fingerprint.empty()) {
    auto text = fs::ReadSmallFile(f.fingerprint, fleet::kMaxFingerprintBytes);
    if (!text.ok()) return text.error().Context("--fingerprint " + f.fingerprint);
    auto fp = fleet::FingerprintFromJson(*text);
    if (!fp.ok()) return fp.error().Context(f.fingerprint);
    return fp;
  }
  fleet::ProbeOptions o;
  o.image_digest = f.image_digest;
  if (o.image_digest.empty()) {
    const char* env = std::getenv("IMGTOOL_IMAGE_DIGEST");
    o.image_digest = env ? env : "";
  }
  o.image_index = f.image_index;
  o.stack_json_path = f.stack_json;
  o.hash_cache_dir = f.no_hash_cache ? "" : (f.hash_cache.empty() ? fleet::DefaultHashCacheDir() : f.hash_cache);
  fleet::ProbeTimings t;
  auto fp = fleet::Probe(o, &t);
  *probe_ms = t.total_ms;
  for (const auto& n : t.notes) PrintLine("imgtool: note: ", n);  // as imgtool probe says them
  if (!fp.ok()) return fp.error().Context("probing this node");
  return fp;
}

// --on-mismatch drain: the plan follows from the verdict every worker shares, so every
// worker prints it; the chief alone runs it (scontrol), so a node is drained once.
oci::Json ApplyMismatchPolicy(const CheckFlags& f, const trainer::ClusterConfig& cluster, const fleet::Verdict& v) {
  if (f.on_mismatch != "drain" || v.ok()) return nullptr;
  std::vector<std::string> node_of_rank;
  for (const auto& t : cluster.tasks) node_of_rank.push_back(t.node);
  const fleet::DrainPlan plan = fleet::PlanDrain(v, node_of_rank);
  oci::Json j = fleet::DrainPlanJson(plan);
  if (!f.json) std::cout << "\n" << fleet::RenderDrainPlan(plan);
  if (cluster.rank != 0) return j;
  j["outcomes"] = oci::Json::array();
  for (const auto& o : fleet::RunDrainPlan(plan)) {
    j["outcomes"].push_back({{"node", o.node}, {"drained", o.drained}, {"error", o.error}});
    if (!f.json) std::cout << (o.drained ? "drained " + o.node : "could not drain " + o.node + ": " + o.error) << "\n";
  }
  return j;
}

int RunCheck(const CheckFlags& f) {
  const bool tty = ::isatty(STDERR_FILENO) == 1;
  auto progress = [tty](const std::string& line) {
    if (tty) PrintLine("imgtool: fleet check: ", line);
  };
  if (!(f.timeout_s > 0) || f.timeout_s > 86400) {
    return Fail(MakeError(ErrorKind::kInvalidInput, "--timeout " + Fixed(f.timeout_s, 3) + ": want 0 < S <= 86400"));
  }
  auto cluster = Cluster(f);
  if (!cluster.ok()) return Fail(cluster.error());
  if (f.on_mismatch == "drain" && cluster->launcher != "slurm") {
    return Fail(MakeError(ErrorKind::kInvalidInput,
                          "--on-mismatch drain drains Slurm nodes: run it under srun (this "
                          "cluster comes from " +
                              cluster->launcher + ")"));
  }

  fleet::GatherOptions opts;
  opts.timeout = std::chrono::milliseconds(static_cast<long>(f.timeout_s * 1000));
  opts.ignore = f.ignore;
  if (!f.expect.empty()) {
    auto text = fs::ReadSmallFile(f.expect, 64u << 20);
    if (!text.ok()) return Fail(text.error().Context("--expect " + f.expect));
    auto expected = fleet::ExpectedFields(*text);
    if (!expected.ok()) return Fail(expected.error().Context("--expect " + f.expect));
    opts.expected = std::move(*expected);
  }
  // The job token: without it the store is open to whoever reaches the chief's port.
  auto token = trainer::FindJobToken(trainer::DefaultTokenSources());
  if (!token.ok()) return Fail(token.error());
  opts.token = *token;
  opts.perf = fleet::PerfOptionsFromFlags(f.perf, f.perf_threshold, f.perf_warn);
  if (tty) opts.progress = progress;
  // Said whether or not on a TTY: a peer dropped by the chief's store broke a limit.
  opts.store_log = [](const std::string& line) { PrintLine("imgtool: fleet check: ", line); };

  double probe_ms = 0;
  auto mine = Mine(f, &probe_ms);
  if (!mine.ok()) return Fail(mine.error());
  double golden_seconds = -1;
  if (f.golden_run) {
    fleet::GoldenRunOptions g;
    g.steps = f.golden_steps;
    progress("golden run: " + std::to_string(g.steps) + " training steps");
    auto r = fleet::GoldenRun(g);
    if (!r.ok()) return Fail(r.error());
    mine->fields["golden_run.weights"] = r->weights_digest;
    mine->node["golden_run.seconds"] = Fixed(r->seconds, 2);
    golden_seconds = r->seconds;
  }

  const auto& me = cluster->tasks[static_cast<size_t>(cluster->rank)];
  progress(me.type + " " + std::to_string(me.index) + " (rank " + std::to_string(cluster->rank) + " of " +
           std::to_string(cluster->world_size) + "): " + (cluster->rank == 0 ? "serving" : "joining") +
           " the rendezvous store at " + cluster->store.host + ":" + std::to_string(cluster->store.port));
  fleet::GatherStats stats;
  auto v = fleet::GatherVerdict(*cluster, *mine, opts, &stats);
  if (!v.ok()) return Fail(v.error());
  // This worker's own timing: the only line that may differ between workers' reports.
  if (golden_seconds >= 0) v->notes["golden_run.seconds"] = Fixed(golden_seconds, 2);

  if (f.json) {
    oci::Json j = fleet::RenderJson(*v);
    j["stats"] = {{"bytes_sent", stats.bytes_sent},
                  {"bytes_received", stats.bytes_received},
                  {"seconds", stats.seconds},
                  {"distinct_digests", stats.distinct_digests},
                  {"probe_ms", probe_ms}};
    oci::Json drain = ApplyMismatchPolicy(f, *cluster, *v);
    if (!drain.is_null()) j["drain"] = drain;
    PrintJson(j);
  } else {
    std::cout << fleet::RenderText(*v);
    ApplyMismatchPolicy(f, *cluster, *v);
    std::cout.flush();
  }
  return v->ExitCode();
}

}  // namespace

void AddFleetCommands(CLI::App& app, Action& run) {
  CLI::App* fleet = app.add_subcommand("fleet", "Preflight checks for a training fleet (fleet check).");
  fleet->require_subcommand(1);
  auto f = std::make_shared<CheckFlags>();
  CLI::App* check = fleet->add_subcommand(
      "check",
      "Prove every worker of a training job runs the same stack before training starts.\n"
      "Pipeline: probe this node (or --fingerprint FILE) [+ --golden-run] -> digest -> gather over the\n"
      "chief's rendezvous store -> compare (the chief) -> the same verdict on every worker.\n\n"
      "Every worker runs it, e.g. as a Kubernetes init container in the trainer's own image, with the\n"
      "trainer's TF_CONFIG: the chief (the \"chief\" task, else worker 0) serves a small store on its\n"
      "TF_CONFIG address for the check, then frees the port for the trainer. Workers send only a digest\n"
      "(and their full fingerprint when it differs from the chief's), so the traffic per worker does\n"
      "not grow with the fleet. Every worker prints the same report: the fields that differ, their\n"
      "values and which workers hold each.\n\n"
      "Who is in the job comes from the first launcher found (the trainer's rule):\n"
      "  TF_CONFIG   the trainer's; the chief's address is the store's:\n"
      "              {\"cluster\": {\"chief\": [\"10.0.0.1:2222\"], \"worker\": [\"10.0.0.2:2222\"]},\n"
      "               \"task\": {\"type\": \"worker\", \"index\": 0}}\n"
      "  Slurm       under srun: SLURM_PROCID, SLURM_NTASKS, SLURM_STEP_NODELIST, SLURM_STEP_TASKS_PER_NODE,\n"
      "              SLURM_DISTRIBUTION, SLURMD_NODENAME, SLURM_JOB_ID, SLURM_STEP_ID; the chief is task 0 on the\n"
      "              step's first node, port 16384 + (job id mod 1024) * 16 + (step id mod 16)\n"
      "  Open MPI    under mpirun: OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK; mpirun names no chief, so give\n"
      "              --rendezvous HOST:PORT or IMGTOOL_RENDEZVOUS\n"
      "  Kubernetes  an Indexed Job: JOB_COMPLETION_INDEX, IMGTOOL_WORLD_SIZE, IMGTOOL_K8S_SERVICE (the headless\n"
      "              Service), HOSTNAME <job>-<index>; the chief is <job>-0.<service>:2222\n"
      "  flags       --rank R --world-size N --rendezvous HOST:PORT (or IMGTOOL_RENDEZVOUS)\n"
      "Under a scheduler, --rendezvous or IMGTOOL_RENDEZVOUS replaces only the chief's address and --host\n"
      "only this worker's; reports name workers \"n3 rank 5\". TF_CONFIG beside a cluster flag is an error.\n\n"
      "Each worker claims its rank in the store and writes only its own keys, once; a rank claimed twice\n"
      "fails the check, naming both processes. IMGTOOL_FLEET_TOKEN (the same secret, 16+ characters, on\n"
      "every worker, e.g. `openssl rand -hex 32`) closes the store to processes that do not hold it; the\n"
      "token is proven over fresh nonces, never sent. Under a scheduler without it, rank 0 warns that the\n"
      "store is open (with srun: export it before srun, which passes it to the job's tasks only).\n\n"
      "Exit codes: 0 every worker matches; 1 the stacks differ (a field, --expect, or a golden run\n"
      "suspect); 3 workers missing after --timeout (a worker whose chief never answers reports the\n"
      "chief missing); 2 invalid input (flags, TF_CONFIG, --expect file, a short token); 4 the store or\n"
      "the verdict disagrees with what this worker sent; 5 refused (a rank claimed twice, a missing or\n"
      "wrong job token); 6 transport (the store's port in use, the chief lost mid-way); 7 --perf: the\n"
      "stacks match but a worker's GEMM GFLOP/s or allreduce busbw is below --perf-threshold (default\n"
      "0.5) of the fleet's median, or its perf step failed (not with --perf-warn); 70 internal.\n\n"
      "Examples:\n"
      "  TF_CONFIG=... imgtool fleet check --timeout 600 --golden-run --no-hash-cache\n"
      "  imgtool fleet check --rank 1 --world-size 4 --rendezvous 10.0.0.1:2222 --expect stack.json\n"
      "  TF_CONFIG=... imgtool fleet check --perf --perf-threshold 0.6\n"
      "  IMGTOOL_FLEET_TOKEN=$(openssl rand -hex 32) srun -N 4 --ntasks-per-node 8 imgtool fleet check ...\n"
      "  srun --ntasks-per-node 1 imgtool fleet check --on-mismatch drain --expect stack.json   # examples/slurm\n"
      "  imgtool probe -o node.json && imgtool fleet check --fingerprint node.json ...");
  check->add_flag("--json", f->json, "Print the verdict as JSON, with this worker's traffic and timings (stats)");
  check->add_option("--timeout", f->timeout_s, "Seconds the chief waits for every worker (and a worker for the chief)")
      ->capture_default_str();
  auto note = [f](const std::string& name) {
    return [f, name](const std::string&) { f->cluster_flags.push_back(name); };
  };
  check->add_option("--rank", f->rank, "This worker's rank (without a launcher)")
      ->check(CLI::NonNegativeNumber)
      ->each(note("--rank"));
  check->add_option("--world-size", f->world_size, "Number of workers (without a launcher)")
      ->check(CLI::PositiveNumber)
      ->each(note("--world-size"));
  check
      ->add_option("--rendezvous", f->rendezvous,
                   "HOST:PORT where rank 0 serves the store (not with TF_CONFIG; default $IMGTOOL_RENDEZVOUS)")
      ->each(note("--rendezvous"));
  check
      ->add_option(
          "--host", f->host,
          "This worker's address (not with TF_CONFIG; default the scheduler's node name, else the rendezvous host)")
      ->each(note("--host"));
  check->add_option("--expect", f->expect,
                    "Also hold every worker to a golden build: /etc/imgtool/stack.json or an imgtool build record");
  check
      ->add_option("--on-mismatch", f->on_mismatch,
                   "report: print the verdict (default); drain (under Slurm): also drain the nodes that differ from "
                   "the majority or from --expect, the fields as the reason (the chief runs scontrol; no majority, "
                   "no drain)")
      ->capture_default_str()
      ->check(CLI::IsMember({"report", "drain"}));
  check->add_option("--ignore", f->ignore,
                    "A field not to compare (repeatable; a trailing * is a prefix: 'env.NCCL_*')");
  check->add_flag("--golden-run", f->golden_run,
                  "Also train a few deterministic steps on this worker's CPU; workers whose weights differ from "
                  "the majority's are suspects");
  check->add_option("--golden-steps", f->golden_steps, "Steps of the golden run")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  check->add_option("--fingerprint", f->fingerprint, "Use this fingerprint (imgtool probe -o FILE) instead of probing");
  check->add_option("--image-digest", f->image_digest,
                    "The image's digest, which a container cannot see (default: $IMGTOOL_IMAGE_DIGEST)");
  check
      ->add_option("--image-index", f->image_index,
                   "The multi-platform index the image came from (default: $IMGTOOL_IMAGE_INDEX)")
      ->envname("IMGTOOL_IMAGE_INDEX");
  check->add_option("--stack-json", f->stack_json, "The image's stack record")->capture_default_str();
  auto* cache = check->add_option("--hash-cache", f->hash_cache,
                                  "Remember library hashes here (default: $XDG_CACHE_HOME/imgtool/probe)");
  check->add_flag("--no-hash-cache", f->no_hash_cache, "Hash every library, remember nothing")->excludes(cache);
  check->add_flag("--perf", f->perf,
                  "Also time a GEMM (the trainer's CPU matmul; workers of one host take turns) and an allreduce "
                  "(Gloo ring, 4 MB) on every worker; flag workers below --perf-threshold of the fleet's median "
                  "(exit 7). Every worker must give it");
  check
      ->add_option("--perf-threshold", f->perf_threshold,
                   "Flag a worker whose GFLOP/s or busbw is below this fraction of the median")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1.0));
  check->add_flag("--perf-warn", f->perf_warn, "Report flagged workers but do not fail the check for them");
  check->callback([f, &run] { run = [f] { return RunCheck(*f); }; });
}

}  // namespace imgtool::cli
