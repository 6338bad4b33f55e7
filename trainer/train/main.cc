// trainer: Fashion-MNIST MLP, data parallel over Gloo, bitwise reproducible.
// Flag parsing, cluster discovery and printing; everything else is in the libraries.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "cluster/cluster_config.h"
#include "cluster/gloo_group.h"
#include "cluster/job_token.h"
#include "cluster/launcher.h"
#include "comm/comm.h"
#include "comm/shm_comm.h"
#include "data/dataset.h"
#include "oci/main_guard.h"
#include "train/shm_step.h"
#include "train/step.h"
#include "train/train.h"
#ifdef TRAINER_HAVE_CUDA
#include "cuda/loader.h"
#endif

namespace {

using trainer::Error;

// Progress goes to stderr (one line per interval, chief only); the result to stdout.
class ConsoleObserver : public trainer::TrainObserver {
 public:
  void OnStep(const trainer::StepReport& r) override {
    std::fprintf(stderr, "step %lld  epoch %d  loss %.4f  samples/s %.0f\n", static_cast<long long>(r.step),
                 r.epoch + 1, r.loss, r.samples_per_sec);
  }
  void OnEpoch(const trainer::EpochReport& r) override {
    std::fprintf(stderr, "epoch %d  test accuracy %.4f  test loss %.4f\n", r.epoch + 1, r.test_accuracy, r.test_loss);
  }
  void OnNote(const std::string& note) override { std::fprintf(stderr, "trainer: %s\n", note.c_str()); }
};

// Milliseconds per step by phase (train/step.h StepPhases); null for a runner that does not time them.
nlohmann::json PhasesJson(const trainer::StepPhases& p) {
  if (p.steps == 0) return nullptr;
  const double ms = 1000.0 / static_cast<double>(p.steps);
  return {{"compute", p.compute_s * ms},
          {"exchange", p.exchange_s * ms},
          {"update", p.update_s * ms},
          {"gather", p.gather_s * ms}};
}

int Fail(const Error& e) {
  std::fprintf(stderr, "trainer: error: %s\n", e.message.c_str());
  return trainer::ExitCodeFor(e.kind);
}

}  // namespace

static int Main(int argc, char** argv) {
  CLI::App app{
      "Train the Keras Fashion-MNIST MLP (784-128-10, dropout 0.2, Adam) bitwise reproducibly.\n"
      "Pipeline: IDX files -> per-epoch Philox shuffle -> micro-shards -> fixed-order gradient sum (Gloo) "
      "-> Adam -> checkpoint / TensorBoard -> sha256 of the weights.\n"
      "Cluster: the first launcher found (trainer/cluster/README.md): TF_CONFIG; Slurm's srun (SLURM_PROCID,\n"
      "SLURM_NTASKS, SLURM_STEP_NODELIST, ...: the chief is task 0 on the step's first node, the port from the job\n"
      "and step ids); Open MPI's mpirun (OMPI_COMM_WORLD_RANK/_SIZE, with --rendezvous or IMGTOOL_RENDEZVOUS); a\n"
      "Kubernetes Indexed Job (JOB_COMPLETION_INDEX, IMGTOOL_WORLD_SIZE, IMGTOOL_K8S_SERVICE); else\n"
      "--rank/--world-size/--rendezvous; else one process alone. Under a scheduler --rendezvous (or\n"
      "IMGTOOL_RENDEZVOUS) replaces only the chief's address. With IMGTOOL_FLEET_TOKEN set (the same secret on\n"
      "every task), the chief's rendezvous store admits only processes that prove they hold it; under a\n"
      "scheduler without it, rank 0 warns that the store is open."};
  trainer::TrainConfig cfg;
  std::string data_dir = trainer::kDefaultDataDir, backend = "cpu", rendezvous, host, busy_poll = "auto",
              comm_kind = "auto";
  int rank = 0, world_size = 1, train_limit = 0, test_limit = 0;
  double rendezvous_timeout = 60, collective_timeout = 120;
  bool json = false;
  cfg.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // later flags win

  app.add_option("--data", data_dir, "Folder with the Fashion-MNIST *-ubyte.gz files")->capture_default_str();
  app.add_option("--epochs", cfg.epochs, "Epochs to train")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--max-steps", cfg.max_steps, "Stop after this many steps in total (0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--global-batch", cfg.global_batch, "Examples per step, over all workers")->capture_default_str();
  app.add_option("--shards", cfg.shards, "Micro-shards per global batch (power of two; bounds the world size)")
      ->capture_default_str();
  app.add_option("--seed", cfg.seed, "Seed of every random number (init, shuffle, dropout)")->capture_default_str();
  app.add_option("--lr", cfg.lr, "Adam learning rate")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--checkpoint-dir", cfg.checkpoint_dir, "Write checkpoints here and resume from the newest");
  app.add_option("--checkpoint-every", cfg.checkpoint_every, "Also checkpoint every N steps (0: epoch ends only)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--logdir", cfg.logdir, "Write TensorBoard event files here");
  app.add_option("--log-every", cfg.log_every, "Log a line every N steps (0: never)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--json", json, "Print the result as one JSON object");
  CLI::Option* cluster_flags[] = {
      app.add_option("--rank", rank, "This process's rank (without a launcher)")->capture_default_str(),
      app.add_option("--world-size", world_size, "Number of processes (without a launcher)")->capture_default_str(),
      app.add_option("--rendezvous", rendezvous,
                     "HOST:PORT where rank 0 serves the rendezvous store (default: $IMGTOOL_RENDEZVOUS)"),
      app.add_option("--host", host,
                     "Address this process binds for Gloo (default: the scheduler's node name, else the rendezvous "
                     "host)")};
  app.add_option("--rendezvous-timeout", rendezvous_timeout, "Seconds to wait for every task to arrive")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--collective-timeout", collective_timeout, "Seconds before a silent peer counts as lost")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", cfg.threads, "Compute threads in this process")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--backend", backend,
                 "cpu, or cuda: the same step on one GPU per process (cuBLAS, cuDNN, NCCL; trainer/README.md)")
      ->capture_default_str();
  app.add_option("--busy-poll", busy_poll,
                 "Waiting ranks spin instead of sleeping: on, off, or auto (on when this host's tasks x --threads "
                 "fit its CPUs)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "on", "off"}));
  app.add_option("--comm", comm_kind,
                 "How ranks exchange gradients: gloo (TCP), shm (shared memory; every rank on this host), or auto "
                 "(shm when every rank shares this host, else gloo)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "gloo", "shm"}));
  app.add_option("--train-limit", train_limit, "Use only the first N training examples (tests)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--test-limit", test_limit, "Use only the first N test examples (tests)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--throttle-ms", cfg.throttle_ms, "Sleep after each step (tests)")->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);

  if (backend != "cpu" && backend != "cuda") {
    return Fail({trainer::ErrorKind::kInvalidInput, "--backend " + backend + ": unknown (cpu, cuda)"});
  }

  trainer::ClusterOverrides overrides{rank, world_size, rendezvous, host, {}, /*alone_when_unset=*/true};
  for (const CLI::Option* o : cluster_flags) {
    if (o->count() > 0) overrides.given.push_back(o->get_name());
  }
  auto cluster = trainer::DetectProcessCluster(overrides);
  if (!cluster.ok()) return Fail(cluster.error());
  auto shape_ok = trainer::ValidateStepShape({cfg.global_batch, cfg.shards}, cluster->world_size);
  if (!shape_ok.ok()) return Fail(shape_ok.error());
  // The job token (IMGTOOL_FLEET_TOKEN), read before the slow set-up so a bad one fails fast.
  auto token = trainer::FindJobToken(trainer::DefaultTokenSources());
  if (!token.ok()) return Fail(token.error());
  if (cluster->rank == 0) {
    for (const auto& n : cluster->notes) std::fprintf(stderr, "trainer: note: %s\n", n.c_str());
    const std::string warning = trainer::OpenStoreWarning(*cluster, *token != nullptr);
    if (!warning.empty()) std::fprintf(stderr, "trainer: %s\n", warning.c_str());
  }

  trainer::StepFactory make_step;  // empty: the CPU step
  if (backend == "cuda") {
#ifdef TRAINER_HAVE_CUDA
    auto plugin = trainer::cuda::LoadBackend();
    if (!plugin.ok()) return Fail(plugin.error());
    auto device = (*plugin)->probe(cluster->rank);
    if (!device.ok()) return Fail(device.error());
    std::fprintf(stderr, "trainer: backend cuda: %s\n", device->c_str());
    make_step = (*plugin)->step_factory(std::chrono::milliseconds(static_cast<long>(collective_timeout * 1000)));
#else
    return Fail({trainer::ErrorKind::kInvalidInput,
                 "--backend cuda: the CUDA backend is not built into this binary (it needs nvcc, cuBLAS, cuDNN and "
                 "NCCL at build time: trainer/CMakeLists.txt); use --backend cpu"});
#endif
  }

  auto data = trainer::LoadFashionMnist(data_dir, train_limit, test_limit);
  if (!data.ok()) return Fail(data.error().Context("loading Fashion-MNIST (--data)"));

  trainer::GlooGroupOptions gopts;
  gopts.rendezvous_timeout = std::chrono::milliseconds(static_cast<long>(rendezvous_timeout * 1000));
  gopts.collective_timeout = std::chrono::milliseconds(static_cast<long>(collective_timeout * 1000));
  // A peer the chief's store refuses or drops (a limit passed: tcp_store.h) is worth a line.
  gopts.store_log = [](const std::string& line) { std::fprintf(stderr, "trainer: %s\n", line.c_str()); };
  gopts.token = *token;
  auto group = trainer::GlooGroup::Join(*cluster, gopts);
  if (!group.ok()) return Fail(group.error());
  // Spinning pays only when no rank waits for a core that a spinning peer holds.
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const bool spin = busy_poll == "on" ||
                    (busy_poll == "auto" && static_cast<long>(trainer::LocalTasks(*cluster)) * cfg.threads <= cpus);
  std::unique_ptr<trainer::Comm> comm;
  std::string why_not_shm;
  if ((*group)->size() == 1) {
    comm = trainer::MakeLocalComm();
  } else if (comm_kind != "gloo") {
    trainer::ShmCommOptions so;
    so.spin = spin;
    so.setup_timeout = gopts.rendezvous_timeout;
    so.collective_timeout = gopts.collective_timeout;
    // The CPU step shares its parameters and hands out its tasks through the segment.
    if (!make_step) so.shared_bytes = trainer::ShmStep::RegionBytes({cfg.global_batch, cfg.shards});
    auto shm = trainer::MakeShmComm(*(*group)->store(), (*group)->rank(), (*group)->size(), so, &why_not_shm);
    if (!shm.ok()) return Fail(shm.error().Context("--comm " + comm_kind));
    if (*shm == nullptr && comm_kind == "shm") {
      return Fail({trainer::ErrorKind::kInvalidInput, "--comm shm: " + why_not_shm});
    }
    comm = std::move(*shm);
  }
  std::string comm_used = (*group)->size() == 1 ? "local" : comm != nullptr ? "shm" : "gloo";
  if (comm_used == "shm" && !make_step) {
    trainer::SharedWork* shared = trainer::SharedWorkOf(*comm);
    make_step = [shared](const trainer::Split& train, const trainer::StepShape& shape, uint64_t seed,
                         const trainer::cpu::AdamConfig& adam, trainer::Comm&,
                         trainer::ThreadPool& pool) -> trainer::Result<std::unique_ptr<trainer::StepRunner>> {
      if (shared->region_bytes() < trainer::ShmStep::RegionBytes(shape)) {  // the segment was sized for cfg's shape
        return trainer::MakeError(trainer::ErrorKind::kInternal,
                                  "shared memory: the segment is too small for the step");
      }
      return std::unique_ptr<trainer::StepRunner>(new trainer::ShmStep(*shared, train, shape, seed, adam, pool));
    };
  }
  if (comm == nullptr) comm = trainer::MakeGlooComm((*group)->context(), spin);
  if ((*group)->rank() == 0 && (*group)->size() > 1) {
    std::fprintf(stderr, "collectives: %s, %d ranks%s%s\n", comm_used == "shm" ? "shared memory" : "Gloo over TCP",
                 (*group)->size(), spin ? ", spinning" : "",
                 why_not_shm.empty() ? "" : (" (not shared memory: " + why_not_shm + ")").c_str());
  }

  ConsoleObserver observer;
  auto sum = trainer::Train(cfg, *data, *comm, observer, make_step);
  if (!sum.ok()) {
    const auto& task = cluster->tasks[static_cast<size_t>(cluster->rank)];
    return Fail(sum.error().Context(task.Name()));
  }

  if (json) {
    nlohmann::json j = {{"digest", sum->digest},
                        {"steps", sum->steps},
                        {"epochs_completed", sum->epochs_completed},
                        {"test_accuracy", sum->test_accuracy},
                        {"test_loss", sum->test_loss},
                        {"last_loss", sum->last_loss},
                        {"samples_per_sec", sum->samples_per_sec},
                        {"train_seconds", sum->train_seconds},
                        {"resumed_from_step", sum->resumed_from_step},
                        {"rank", cluster->rank},
                        {"comm", comm_used},
                        {"step_ms", PhasesJson(sum->phases)},
                        {"world_size", cluster->world_size},
                        {"threads", cfg.threads},
                        {"seed", cfg.seed},
                        {"global_batch", cfg.global_batch},
                        {"shards", cfg.shards}};
    std::cout << j.dump() << "\n";
  } else {
    if (cluster->rank == 0) {
      std::printf("test accuracy %.4f after %lld steps (%d epochs); %.0f samples/s\n", sum->test_accuracy,
                  static_cast<long long>(sum->steps), sum->epochs_completed, sum->samples_per_sec);
    }
    std::printf("weights %s\n", sum->digest.c_str());
  }
  return 0;
}

int main(int argc, char** argv) {
  return imgtool::RunGuarded("trainer", [&] { return Main(argc, argv); });
}
