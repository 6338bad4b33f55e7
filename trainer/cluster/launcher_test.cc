#include "cluster/launcher.h"

#include <gtest/gtest.h>

namespace trainer {
namespace {

using Vars = std::map<std::string, std::string>;

const char kTf[] = R"({"cluster": {"worker": ["h0:2222", "h1:2222"]}, "task": {"type": "worker", "index": 1}})";

Vars SlurmTask(int rank) {
  return {{"SLURM_PROCID", std::to_string(rank)},
          {"SLURM_NTASKS", "4"},
          {"SLURM_JOB_ID", "77"},
          {"SLURM_STEP_ID", "0"},
          {"SLURM_STEP_NODELIST", "gpu[01-02]"},
          {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"},
          {"SLURMD_NODENAME", rank < 2 ? "gpu01" : "gpu02"}};
}
Vars OmpiTask(int rank) {
  return {{"OMPI_COMM_WORLD_RANK", std::to_string(rank)},
          {"OMPI_COMM_WORLD_SIZE", "4"},
          {"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(rank % 2)},
          {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}};
}
Vars K8sTask(int rank) {
  return {{"JOB_COMPLETION_INDEX", std::to_string(rank)},
          {"IMGTOOL_WORLD_SIZE", "3"},
          {"IMGTOOL_K8S_SERVICE", "fleet-train"},
          {"HOSTNAME", "fleet-train-" + std::to_string(rank)}};
}
Vars Merge(Vars a, const Vars& b) {
  for (const auto& [k, v] : b) a[k] = v;
  return a;
}

ClusterOverrides Flags(std::vector<std::string> given, int rank = 0, int world = 1, std::string rendezvous = "",
                       std::string host = "") {
  ClusterOverrides o;
  o.given = std::move(given);
  o.rank = rank;
  o.world_size = world;
  o.rendezvous = std::move(rendezvous);
  o.host = std::move(host);
  return o;
}

Result<ClusterConfig> Detect(const Vars& v, const ClusterOverrides& o = {}) {
  return DetectCluster(MapEnvironment(v), o);
}
std::string Refusal(const Vars& v, const ClusterOverrides& o = {}) {
  auto c = Detect(v, o);
  return c.ok() ? "accepted (" + c->launcher + ")" : c.error().message;
}

TEST(DetectCluster, TfConfig) {
  auto c = Detect({{"TF_CONFIG", kTf}});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->launcher, "tf_config");
  EXPECT_EQ(c->rank, 1);
  EXPECT_EQ(c->tasks[1].Label(), "worker 1");
  EXPECT_EQ(c->tasks[1].Name(), "worker:1");
  EXPECT_EQ(c->tasks[1].node, "");
  EXPECT_EQ(Refusal({{"TF_CONFIG", "{"}}), "TF_CONFIG is not valid JSON");
}

TEST(DetectCluster, TfConfigWinsOverEverySchedulerButNotBesideFlags) {
  auto c = Detect(Merge(Merge(SlurmTask(3), OmpiTask(2)), Merge(K8sTask(1), {{"TF_CONFIG", kTf}})));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->launcher, "tf_config");
  EXPECT_EQ(Refusal({{"TF_CONFIG", kTf}}, Flags({"--world-size"}, 0, 2)),
            "TF_CONFIG is set and so is --world-size: TF_CONFIG names every task and its address; give one or the "
            "other");
  EXPECT_EQ(Refusal({{"TF_CONFIG", kTf}, {"IMGTOOL_RENDEZVOUS", "h:1"}}),
            "TF_CONFIG is set and so is IMGTOOL_RENDEZVOUS: TF_CONFIG names the chief's address; give one or the "
            "other");
}

TEST(DetectCluster, Slurm) {
  auto c = Detect(SlurmTask(2));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->launcher, "slurm");
  EXPECT_EQ(c->rank, 2);
  EXPECT_EQ(c->world_size, 4);
  EXPECT_EQ(c->tasks[2].Label(), "gpu02 rank 2");
  EXPECT_EQ(c->store.host, "gpu01");
  EXPECT_EQ(c->self_host, "gpu02");
  EXPECT_TRUE(UnderScheduler(*c));
}

TEST(DetectCluster, RendezvousAndHostReplaceOnlyTheirPart) {
  auto env = Detect(Merge(SlurmTask(2), {{"IMGTOOL_RENDEZVOUS", "10.1.1.1:4000"}}));
  ASSERT_TRUE(env.ok()) << env.error().message;
  EXPECT_EQ(env->store.host, "10.1.1.1");
  EXPECT_EQ(env->store_source, "IMGTOOL_RENDEZVOUS");
  EXPECT_EQ(env->rank, 2);
  EXPECT_EQ(env->tasks[2].Label(), "gpu02 rank 2");
  // The flag beats the variable; --host sets only this task's address.
  auto flag = Detect(Merge(SlurmTask(2), {{"IMGTOOL_RENDEZVOUS", "10.1.1.1:4000"}}),
                     Flags({"--rendezvous", "--host"}, 0, 1, "10.2.2.2:5000", "10.9.9.9"));
  ASSERT_TRUE(flag.ok()) << flag.error().message;
  EXPECT_EQ(flag->store.host, "10.2.2.2");
  EXPECT_EQ(flag->store_source, "--rendezvous");
  EXPECT_EQ(flag->self_host, "10.9.9.9");
  EXPECT_EQ(flag->world_size, 4);
  EXPECT_EQ(Refusal(SlurmTask(2), Flags({"--rank"}, 1)),
            "--rank is for starting tasks by hand: slurm gives this task rank 2 of 4");
  EXPECT_EQ(Refusal(SlurmTask(2), Flags({"--world-size"}, 0, 8)),
            "--world-size is for starting tasks by hand: slurm gives this task rank 2 of 4");
  EXPECT_EQ(Refusal(Merge(SlurmTask(2), {{"IMGTOOL_RENDEZVOUS", "nohost"}})),
            "IMGTOOL_RENDEZVOUS: address \"nohost\" is not host:port");
}

TEST(DetectCluster, SlurmOutsideAStepIsNotATask) {
  Vars batch = SlurmTask(0);
  batch["SLURM_STEP_ID"] = "4294967294";
  EXPECT_EQ(Refusal(batch),
            "SLURM_PROCID is set, but this is step 4294967294 of job 77 (a batch, extern or interactive step, not "
            "srun's), not a task of an srun step: start it with srun (or give --rank/--world-size/--rendezvous)");
  // There the flags say who we are.
  auto c = Detect(batch, Flags({"--rank", "--world-size", "--rendezvous"}, 1, 2, "127.0.0.1:9"));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->launcher, "flags");
  EXPECT_EQ(c->rank, 1);
  // And the trainer, alone, runs alone.
  ClusterOverrides alone;
  alone.alone_when_unset = true;
  batch.erase("SLURM_STEP_ID");
  EXPECT_NE(Refusal(batch, alone).find("SLURM_STEP_ID is unset"), std::string::npos);
}

TEST(DetectCluster, OpenMpi) {
  auto c = Detect(Merge(OmpiTask(3), {{"IMGTOOL_RENDEZVOUS", "head:2345"}}));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->launcher, "openmpi");
  EXPECT_EQ(c->rank, 3);
  EXPECT_EQ(c->world_size, 4);
  EXPECT_EQ(c->local_rank, 1);
  EXPECT_EQ(c->local_tasks, 2);
  EXPECT_EQ(c->store.host, "head");
  EXPECT_EQ(c->tasks[3].Label(), "rank 3");
  EXPECT_EQ(Refusal(OmpiTask(3)),
            "Open MPI (OMPI_COMM_WORLD_RANK 3 of 4): mpirun tells no task where rank 0 runs: pass --rendezvous "
            "HOST:PORT (rank 0's host, a free port), or IMGTOOL_RENDEZVOUS=HOST:PORT with mpirun -x "
            "IMGTOOL_RENDEZVOUS");
  EXPECT_EQ(Refusal(Merge(OmpiTask(0), {{"OMPI_COMM_WORLD_SIZE", "x"}})),
            "Open MPI: OMPI_COMM_WORLD_SIZE \"x\" is not a decimal integer");
  EXPECT_EQ(Refusal({{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "4"}}),
            "Open MPI: OMPI_COMM_WORLD_RANK 4 is outside 0..3");
}

TEST(DetectCluster, MpirunInsideAnAllocationIsOpenMpi) {
  // mpirun's daemons run as one Slurm task per node: SLURM_PROCID is the node's index.
  Vars v = Merge(SlurmTask(1), Merge(OmpiTask(3), {{"IMGTOOL_RENDEZVOUS", "head:2345"}}));
  auto c = Detect(v);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->launcher, "openmpi");
  EXPECT_EQ(c->rank, 3);
  ASSERT_EQ(c->notes.size(), 1u);
  // When both agree (srun started us, and Open MPI's variables were passed on), Slurm's are richer.
  auto same = Detect(Merge(SlurmTask(3), OmpiTask(3)));
  ASSERT_TRUE(same.ok()) << same.error().message;
  EXPECT_EQ(same->launcher, "slurm");
}

TEST(DetectCluster, KubernetesIndexedJob) {
  auto c = Detect(K8sTask(2));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->launcher, "k8s-indexed-job");
  EXPECT_EQ(c->rank, 2);
  EXPECT_EQ(c->world_size, 3);
  EXPECT_EQ(c->store.host, "fleet-train-0.fleet-train");
  EXPECT_EQ(c->store.port, kK8sStorePort);
  EXPECT_EQ(c->self_host, "fleet-train-2");
  EXPECT_EQ(c->tasks[0].Label(), "fleet-train-0 rank 0");
  EXPECT_EQ(c->tasks[2].Label(), "fleet-train-2 rank 2");
  EXPECT_EQ(Refusal(Merge(K8sTask(2), {{"IMGTOOL_WORLD_SIZE", ""}})),
            "Kubernetes Indexed Job (JOB_COMPLETION_INDEX 2): IMGTOOL_WORLD_SIZE is unset: set it to the Job's "
            "completions");
  EXPECT_EQ(Refusal(Merge(K8sTask(2), {{"IMGTOOL_WORLD_SIZE", "2"}})),
            "Kubernetes Indexed Job (JOB_COMPLETION_INDEX 2) is outside 0..1 (IMGTOOL_WORLD_SIZE)");
  EXPECT_EQ(Refusal(Merge(K8sTask(2), {{"IMGTOOL_K8S_SERVICE", "Bad_Name"}})),
            "Kubernetes Indexed Job (JOB_COMPLETION_INDEX 2): IMGTOOL_K8S_SERVICE \"Bad_Name\" is not a Service "
            "name (a DNS label)");
  EXPECT_NE(Refusal(Merge(K8sTask(2), {{"HOSTNAME", "somepod"}})).find("it needs HOSTNAME \"<job>-2\""),
            std::string::npos);
  // With the rendezvous given, neither the hostname nor the service is needed.
  auto given = Detect({{"JOB_COMPLETION_INDEX", "1"}, {"IMGTOOL_WORLD_SIZE", "2"}, {"IMGTOOL_RENDEZVOUS", "c:7"}});
  ASSERT_TRUE(given.ok()) << given.error().message;
  EXPECT_EQ(given->store.host, "c");
  EXPECT_EQ(given->self_host, "c");
}

TEST(DetectCluster, SchedulersInOrder) {
  EXPECT_EQ(Detect(Merge(SlurmTask(1), K8sTask(1)))->launcher, "slurm");
  EXPECT_EQ(Detect(Merge(Merge(OmpiTask(1), K8sTask(1)), {{"IMGTOOL_RENDEZVOUS", "h:1"}}))->launcher, "openmpi");
  // A scheduler beats the flags that are not about the rendezvous.
  EXPECT_EQ(Detect(K8sTask(1), Flags({"--host"}, 0, 1, "", "10.0.0.5"))->self_host, "10.0.0.5");
}

TEST(DetectCluster, FlagsAndNothing) {
  auto c = Detect({}, Flags({"--rank", "--world-size", "--rendezvous"}, 1, 3, "10.0.0.1:29500"));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->launcher, "flags");
  EXPECT_EQ(c->tasks[1].Label(), "worker 1");
  EXPECT_EQ(c->store_source, "--rendezvous");
  // IMGTOOL_RENDEZVOUS stands in for --rendezvous.
  auto env = Detect({{"IMGTOOL_RENDEZVOUS", "10.0.0.2:29500"}}, Flags({"--rank", "--world-size"}, 1, 3));
  ASSERT_TRUE(env.ok()) << env.error().message;
  EXPECT_EQ(env->store.host, "10.0.0.2");
  EXPECT_EQ(env->store_source, "IMGTOOL_RENDEZVOUS");
  EXPECT_EQ(Refusal({}, Flags({"--rank", "--world-size"}, 1, 3)),
            "--world-size > 1 needs --rendezvous HOST:PORT (or TF_CONFIG)");
  // Nothing at all: fleet check asks; the trainer runs alone.
  std::string which = Refusal({});
  EXPECT_EQ(which.rfind("which cluster? None of the launchers is here: TF_CONFIG; Slurm's srun", 0), 0u) << which;
  ClusterOverrides alone;
  alone.alone_when_unset = true;
  auto one = Detect({}, alone);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->world_size, 1);
  EXPECT_EQ(one->launcher, "flags");
}

TEST(OpenStoreWarning, OnlyRankZeroUnderASchedulerWithoutAToken) {
  auto c = Detect(SlurmTask(0));
  ASSERT_TRUE(c.ok());
  const std::string w = OpenStoreWarning(*c, false);
  EXPECT_EQ(w.rfind("warning: the rendezvous store at gpu01:", 0), 0u) << w;
  EXPECT_NE(w.find("openssl rand -hex 32"), std::string::npos);
  EXPECT_EQ(OpenStoreWarning(*c, true), "");
  EXPECT_EQ(OpenStoreWarning(*Detect(SlurmTask(1)), false), "");
  EXPECT_EQ(OpenStoreWarning(*Detect({{"TF_CONFIG", kTf}}), false), "");
  EXPECT_NE(OpenStoreWarning(*Detect(K8sTask(0)), false).find("secretKeyRef"), std::string::npos);
}

TEST(EnvInteger, StrictDecimals) {
  auto env = MapEnvironment({{"A", "12"}, {"B", "+1"}, {"C", " 1"}, {"D", "99999999999999999999"}, {"E", ""}});
  EXPECT_EQ(**EnvInteger(env, "A", 0, 100), 12);
  EXPECT_FALSE(EnvInteger(env, "B", 0, 100).ok());
  EXPECT_FALSE(EnvInteger(env, "C", 0, 100).ok());
  EXPECT_FALSE(EnvInteger(env, "D", 0, 100).ok());
  EXPECT_FALSE(EnvInteger(env, "E", 0, 100)->has_value());  // empty reads as unset
  EXPECT_EQ(EnvInteger(env, "A", 0, 11).error().message, "A 12 is outside 0..11");
}

}  // namespace
}  // namespace trainer
