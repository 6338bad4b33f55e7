#include "cluster/slurm.h"

#include <gtest/gtest.h>

#include <set>

namespace trainer {
namespace {

using Vars = std::map<std::string, std::string>;
using Names = std::vector<std::string>;

// Task `rank` of an srun step of 7 tasks over n[1-3],n7: 2 2 2 1, block.
Vars Step(int rank, const std::string& node) {
  return {{"SLURM_PROCID", std::to_string(rank)},
          {"SLURM_NTASKS", "7"},
          {"SLURM_LOCALID", "0"},
          {"SLURM_JOB_ID", "4242"},
          {"SLURM_STEP_ID", "3"},
          {"SLURM_STEP_NODELIST", "n[1-3,7]"},
          {"SLURM_STEP_TASKS_PER_NODE", "2(x3),1"},
          {"SLURMD_NODENAME", node}};
}

Result<ClusterConfig> Slurm(const Vars& v) { return SlurmCluster(MapEnvironment(v), std::nullopt, ""); }

// A container step (Slurm 22.05): no SLURM_PROCID; oci-run gives SLURMD_NODENAME and
// SLURM_LOCALID, and the rank follows from the layout.
TEST(SlurmContainerStep, TheRankIsDerivedFromTheNodeAndTheLocalId) {
  const Names by_rank{"n1", "n1", "n2", "n2", "n3", "n3", "n7"};
  for (int rank = 0; rank < 7; ++rank) {
    Vars v = Step(rank, "");
    const std::string& node = by_rank[static_cast<size_t>(rank)];
    v["SLURMD_NODENAME"] = node;
    v["SLURM_LOCALID"] = std::to_string(rank % 2);
    v.erase("SLURM_PROCID");
    auto c = Slurm(v);
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c->rank, rank);
    EXPECT_EQ(c->tasks[static_cast<size_t>(rank)].node, node);
  }
  Vars cyclic = Step(0, "n2");
  cyclic.erase("SLURM_PROCID");
  cyclic["SLURM_DISTRIBUTION"] = "cyclic";
  cyclic["SLURM_LOCALID"] = "1";
  EXPECT_EQ(Slurm(cyclic)->rank, 5);  // n1 n2 n3 n7 n1 n2 n3
}

TEST(SlurmContainerStep, WithoutTheTaskVariablesItSaysWhatToDo) {
  Vars v = Step(0, "");
  v.erase("SLURM_PROCID");
  v.erase("SLURMD_NODENAME");
  EXPECT_TRUE(SlurmPresent(MapEnvironment(v)));
  EXPECT_NE(Slurm(v).error().message.find("examples/slurm/oci-run"), std::string::npos);
  v["SLURMD_NODENAME"] = "n7";
  v["SLURM_LOCALID"] = "1";  // n7 has one task
  EXPECT_NE(Slurm(v).error().message.find("fewer tasks"), std::string::npos);
  v["SLURM_DISTRIBUTION"] = "plane=2";
  EXPECT_NE(Slurm(v).error().message.find("hides which rank"), std::string::npos);
}

TEST(SlurmLayout, BlockAndCyclic) {
  const Names nodes{"a", "b", "c"};
  auto block = SlurmNodesOfRanks(nodes, {2, 2, 1}, "", 5);
  ASSERT_TRUE(block.ok() && block->has_value());
  EXPECT_EQ(**block, (Names{"a", "a", "b", "b", "c"}));
  EXPECT_EQ(**SlurmNodesOfRanks(nodes, {2, 2, 1}, "block:cyclic", 5), **block);
  auto cyclic = SlurmNodesOfRanks(nodes, {2, 2, 1}, "cyclic", 5);
  ASSERT_TRUE(cyclic.ok() && cyclic->has_value());
  EXPECT_EQ(**cyclic, (Names{"a", "b", "c", "a", "b"}));
  EXPECT_EQ(**SlurmNodesOfRanks(nodes, {3, 1, 2}, "cyclic:block", 6), (Names{"a", "b", "c", "a", "c", "a"}));
  // plane, arbitrary: not known from the variables.
  auto plane = SlurmNodesOfRanks(nodes, {2, 2, 1}, "plane=2", 5);
  ASSERT_TRUE(plane.ok());
  EXPECT_FALSE(plane->has_value());
}

TEST(SlurmLayout, CountsMustMatchTheNodesAndTheWorld) {
  EXPECT_EQ(SlurmNodesOfRanks({"a", "b"}, {1}, "", 1).error().message,
            "Slurm: SLURM_STEP_TASKS_PER_NODE gives 1 nodes, SLURM_STEP_NODELIST 2");
  EXPECT_EQ(SlurmNodesOfRanks({"a", "b"}, {1, 2}, "", 4).error().message,
            "Slurm: SLURM_STEP_TASKS_PER_NODE adds up to 3 tasks, SLURM_NTASKS is 4");
}

TEST(SlurmCluster, EveryRankNamedByItsNode) {
  auto c = Slurm(Step(5, "n3"));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->launcher, "slurm");
  EXPECT_EQ(c->rank, 5);
  EXPECT_EQ(c->world_size, 7);
  EXPECT_EQ(c->job_id, "4242");
  EXPECT_EQ(c->step_id, "3");
  EXPECT_EQ(c->local_rank, 0);
  EXPECT_EQ(c->local_tasks, 2);
  EXPECT_EQ(c->store.host, "n1");
  EXPECT_EQ(c->store.port, SlurmStorePort(4242, 3));
  EXPECT_EQ(c->store_source, "SLURM_STEP_NODELIST");
  EXPECT_EQ(c->self_host, "n3");
  EXPECT_EQ(c->tasks[5].Name(), "n3 rank 5");
  EXPECT_EQ(c->tasks[5].Label(), "n3 rank 5");
  EXPECT_EQ(c->tasks[0].Name(), "n1 rank 0");
  EXPECT_EQ(c->tasks[6].Name(), "n7 rank 6");
  EXPECT_NE(c->port_hint.find("IMGTOOL_RENDEZVOUS"), std::string::npos);
  EXPECT_TRUE(c->notes.empty());
}

TEST(SlurmCluster, CyclicAndTheNodeNameCrossCheck) {
  Vars v = Step(1, "n2");
  v["SLURM_DISTRIBUTION"] = "cyclic";
  auto c = Slurm(v);
  ASSERT_TRUE(c.ok()) << c.error().message;
  // One task per node per round: n1 n2 n3 n7, then n1 n2 n3.
  EXPECT_EQ(c->tasks[3].Name(), "n7 rank 3");
  EXPECT_EQ(c->tasks[4].Name(), "n1 rank 4");
  EXPECT_EQ(c->tasks[6].Name(), "n3 rank 6");
  // Block puts rank 1 on n1, not n2: the variables contradict each other.
  EXPECT_EQ(Slurm(Step(1, "n2")).error().message,
            "Slurm: SLURMD_NODENAME is n2, but SLURM_STEP_NODELIST, SLURM_STEP_TASKS_PER_NODE and "
            "SLURM_DISTRIBUTION put rank 1 on n1");
}

TEST(SlurmCluster, OtherDistributionsKnowOnlyTheirOwnNode) {
  Vars v = Step(4, "n7");
  v["SLURM_DISTRIBUTION"] = "plane=4";
  auto c = Slurm(v);
  ASSERT_TRUE(c.ok()) << c.error().message;
  // Named by rank alone, its own task too: every worker's list (and report) is the same.
  EXPECT_EQ(c->tasks[4].Name(), "rank 4");
  EXPECT_EQ(c->self_host, "n7");
  EXPECT_EQ(c->tasks[3].Name(), "rank 3");
  EXPECT_EQ(c->tasks[3].Label(), "rank 3");
  EXPECT_EQ(c->store.host, "n1");
  EXPECT_EQ(c->local_tasks, 1);  // n7's count
  ASSERT_EQ(c->notes.size(), 1u);
  EXPECT_NE(c->notes[0].find("SLURM_DISTRIBUTION=plane=4: only each task's own node is known"), std::string::npos);
}

TEST(SlurmCluster, TheJobsNodesStandInForTheSteps) {
  Vars v = Step(0, "n1");
  v.erase("SLURM_STEP_NODELIST");
  v["SLURM_JOB_NODELIST"] = "n[1-3,7]";
  auto c = Slurm(v);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->store.host, "n1");
  EXPECT_EQ(c->store_source, "SLURM_JOB_NODELIST");
  EXPECT_EQ(c->tasks[0].Name(), "rank 0");
  EXPECT_EQ(c->tasks[1].Name(), "rank 1");
  EXPECT_EQ(c->self_host, "n1");
  ASSERT_EQ(c->notes.size(), 1u);
}

TEST(SlurmCluster, BadVariablesAreRefused) {
  auto with = [](int rank, const std::string& key, const std::string& value) {
    Vars v = Step(rank, rank < 2 ? "n1" : "n2");
    if (value.empty()) {
      v.erase(key);
    } else {
      v[key] = value;
    }
    auto c = Slurm(v);
    return c.ok() ? std::string("ok") : c.error().message;
  };
  EXPECT_EQ(with(0, "SLURM_PROCID", "7"), "Slurm: SLURM_PROCID 7 is outside 0..6 (SLURM_NTASKS 7)");
  EXPECT_EQ(with(0, "SLURM_PROCID", "-1"), "Slurm: SLURM_PROCID \"-1\" is not a decimal integer");
  EXPECT_EQ(with(0, "SLURM_NTASKS", "65537"), "Slurm: SLURM_NTASKS 65537 is outside 1..65536");
  EXPECT_EQ(with(0, "SLURM_JOB_ID", "12a"), "Slurm: SLURM_JOB_ID \"12a\" is not a job id");
  EXPECT_EQ(with(0, "SLURM_STEP_NODELIST", "n[1-3,7"), "Slurm: SLURM_STEP_NODELIST: an unclosed '[' in \"n[1-3,7\"");
  EXPECT_EQ(with(0, "SLURM_STEP_NODELIST", "n[1-3],n1"), "Slurm: SLURM_STEP_NODELIST names node n1 twice");
  EXPECT_EQ(with(0, "SLURM_STEP_TASKS_PER_NODE", "2(x4)"),
            "Slurm: SLURM_STEP_TASKS_PER_NODE adds up to 8 tasks, SLURM_NTASKS is 7");
  EXPECT_EQ(with(0, "SLURM_STEP_TASKS_PER_NODE", "9"),
            "Slurm: SLURM_STEP_TASKS_PER_NODE: task count \"9\" is outside 1..7");
  Vars none = Step(0, "n1");
  none.erase("SLURM_STEP_NODELIST");
  EXPECT_NE(Slurm(none).error().message.find("which node is the chief's? Set --rendezvous"), std::string::npos);
}

TEST(SlurmCluster, AStoreGivenReplacesOnlyTheChiefsAddress) {
  auto c = SlurmCluster(MapEnvironment(Step(5, "n3")), HostPort{"10.0.0.9", 5000}, "IMGTOOL_RENDEZVOUS");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->store.host, "10.0.0.9");
  EXPECT_EQ(c->store.port, 5000);
  EXPECT_EQ(c->store_source, "IMGTOOL_RENDEZVOUS");
  EXPECT_EQ(c->port_hint, "");
  EXPECT_EQ(c->rank, 5);
  EXPECT_EQ(c->self_host, "n3");
  EXPECT_EQ(c->tasks[5].Name(), "n3 rank 5");
}

TEST(SlurmPort, TwoStepsOfAJobAndTwoJobsDiffer) {
  EXPECT_EQ(SlurmStorePort(0, 0), 16384);
  EXPECT_EQ(SlurmStorePort(1023, 15), 32767);
  EXPECT_NE(SlurmStorePort(4242, 0), SlurmStorePort(4242, 1));
  EXPECT_NE(SlurmStorePort(4242, 0), SlurmStorePort(4243, 0));
  // Every pair of the 16 steps of a job, and of 1024 consecutive jobs, differs; all stay
  // below Linux's ephemeral ports.
  std::set<int> ports;
  for (uint64_t job = 90000; job < 90000 + 1024; ++job) {
    for (uint64_t step = 0; step < 16; ++step) {
      int p = SlurmStorePort(job, step);
      EXPECT_GE(p, 16384);
      EXPECT_LT(p, 32768);
      ports.insert(p);
    }
  }
  EXPECT_EQ(ports.size(), 1024u * 16u);
  // The documented collisions: job ids 1024 apart, step ids 16 apart; the special steps stay in range.
  EXPECT_EQ(SlurmStorePort(5, 0), SlurmStorePort(5 + 1024, 0));
  EXPECT_EQ(SlurmStorePort(5, 1), SlurmStorePort(5, 17));
  EXPECT_LT(SlurmStorePort(4294967295u, 4294967294u), 32768);
}

TEST(SlurmOutsideStep, BatchExternInteractiveAndShells) {
  Vars v = Step(0, "n1");
  EXPECT_EQ(SlurmOutsideStep(MapEnvironment(v)), std::nullopt);
  v["SLURM_STEP_ID"] = "4294967294";
  EXPECT_EQ(SlurmOutsideStep(MapEnvironment(v)).value_or(""),
            "step 4294967294 of job 4242 (a batch, extern or interactive step, not srun's)");
  v["SLURM_STEP_ID"] = "4294967291";  // 20.11+'s batch script
  EXPECT_TRUE(SlurmOutsideStep(MapEnvironment(v)).has_value());
  v["SLURM_STEP_ID"] = "batch";
  EXPECT_EQ(SlurmOutsideStep(MapEnvironment(v)).value_or(""), "the batch step of job 4242");
  v.erase("SLURM_STEP_ID");
  EXPECT_EQ(SlurmOutsideStep(MapEnvironment(v)).value_or(""),
            "a shell of the allocation of job 4242 (SLURM_STEP_ID is unset: its batch script or salloc)");
  v["SLURM_STEPID"] = "2";  // the older name
  EXPECT_EQ(SlurmOutsideStep(MapEnvironment(v)), std::nullopt);
}

}  // namespace
}  // namespace trainer
