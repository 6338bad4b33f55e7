#include "fleet/drain.h"
#include "fleet/drain_exec.h"

#include <gtest/gtest.h>

namespace imgtool::fleet {
namespace {

FieldDiff Diff(std::string field, std::vector<ValueGroup> groups, std::optional<std::string> expected = {}) {
  return FieldDiff{std::move(field), "", std::move(groups), std::move(expected)};
}

Verdict WithDiffs(std::vector<FieldDiff> diffs) {
  Verdict v;
  v.expected_workers = 4;
  v.diffs = std::move(diffs);
  return v;
}

const std::vector<std::string> kNodes = {"n1", "n1", "n2", "n2", "n3", "n3", "n4", "n4"};

TEST(PlanDrain, OkVerdictDrainsNothing) {
  DrainPlan p = PlanDrain(WithDiffs({}), kNodes);
  EXPECT_TRUE(p.drain.empty());
  EXPECT_TRUE(p.refused.empty());
}

TEST(PlanDrain, TheMinorityNodeIsDrainedWithTheFieldAsReason) {
  DrainPlan p =
      PlanDrain(WithDiffs({Diff("env.NCCL_ALGO", {{"(absent)", {0, 1, 2, 3, 6, 7}}, {"Tree", {4, 5}}})}), kNodes);
  ASSERT_EQ(p.drain.size(), 1u);
  EXPECT_EQ(p.drain[0], (NodeDrain{"n3", "imgtool: env.NCCL_ALGO differs", {4, 5}}));
  EXPECT_TRUE(p.refused.empty());
  EXPECT_EQ(RenderDrainPlan(p), "drain n3: imgtool: env.NCCL_ALGO differs (rank 4, 5)\n");
}

TEST(PlanDrain, FieldsOfOneNodeAreListedTogether) {
  DrainPlan p = PlanDrain(WithDiffs({Diff("nccl", {{"2.28.9", {0, 1, 2, 3, 4, 5, 7}}, {"2.19.3", {6}}}),
                                     Diff("env.NCCL_ALGO", {{"(absent)", {0, 1, 2, 3, 4, 5, 6}}, {"Tree", {7}}})}),
                          kNodes);
  ASSERT_EQ(p.drain.size(), 1u);
  EXPECT_EQ(p.drain[0].node, "n4");
  EXPECT_EQ(p.drain[0].reason, "imgtool: env.NCCL_ALGO, nccl differ");
  EXPECT_EQ(p.drain[0].ranks, (std::vector<int>{6, 7}));
}

TEST(PlanDrain, ATieRefusesAndSaysSo) {
  DrainPlan p = PlanDrain(WithDiffs({Diff("nccl", {{"2.28.9", {0, 1, 2, 3}}, {"2.19.3", {4, 5, 6, 7}}})}), kNodes);
  EXPECT_TRUE(p.drain.empty());
  EXPECT_EQ(p.refused, "no majority for nccl (4 and 4 workers)");
  EXPECT_EQ(RenderDrainPlan(p), "not draining: no majority for nccl (4 and 4 workers)\n");
}

TEST(PlanDrain, APluralityIsNotAMajority) {
  DrainPlan p = PlanDrain(WithDiffs({Diff("nccl", {{"a", {0, 1}}, {"b", {2}}, {"c", {3}}})}), kNodes);
  EXPECT_TRUE(p.drain.empty());
  EXPECT_EQ(p.refused, "no majority for nccl (2, 1 and 1 workers)");
}

TEST(PlanDrain, OneFieldWithoutMajorityRefusesTheWholePlan) {
  DrainPlan p = PlanDrain(WithDiffs({Diff("env.X", {{"a", {0, 1, 2, 3, 4, 5, 6}}, {"b", {7}}}),
                                     Diff("nccl", {{"a", {0, 1, 2, 3}}, {"b", {4, 5, 6, 7}}})}),
                          kNodes);
  EXPECT_TRUE(p.drain.empty());
  EXPECT_NE(p.refused.find("nccl"), std::string::npos);
}

TEST(PlanDrain, UnderExpectTheWorkersThatDifferFromItAreOddEvenAsAMajority) {
  DrainPlan p =
      PlanDrain(WithDiffs({Diff("nccl", {{"2.19.3", {0, 1, 2, 3, 4, 5}}, {"2.28.9", {6, 7}}}, "2.28")}), kNodes);
  ASSERT_EQ(p.drain.size(), 3u);
  EXPECT_EQ(p.drain[0].node, "n1");
  EXPECT_EQ(p.drain[2].node, "n3");
  EXPECT_TRUE(p.refused.empty());
}

TEST(PlanDrain, MissingWorkersAreNotDrained) {
  Verdict v = WithDiffs({});
  v.missing = {3};
  DrainPlan p = PlanDrain(v, kNodes);
  EXPECT_TRUE(p.drain.empty());
  EXPECT_NE(p.refused.find("missing"), std::string::npos);
}

TEST(PlanDrain, AnUnknownOrUnsafeNodeRefuses) {
  Verdict v = WithDiffs({Diff("nccl", {{"a", {0, 1, 2}}, {"b", {3}}})});
  EXPECT_NE(PlanDrain(v, {"n1", "n1", "n2", ""}).refused.find("unknown"), std::string::npos);
  EXPECT_NE(PlanDrain(v, {"n1", "n1", "n2"}).refused.find("unknown"), std::string::npos);
  EXPECT_NE(PlanDrain(v, {"n1", "n1", "n2", "n3 State=RESUME"}).refused.find("safely"), std::string::npos);
  EXPECT_NE(PlanDrain(v, {"n1", "n1", "n2", "-n3"}).refused.find("safely"), std::string::npos);
}

TEST(PlanDrain, AHostileFieldNameIsCountedNotEchoed) {
  DrainPlan p =
      PlanDrain(WithDiffs({Diff("env.X\" Reason=\"x", {{"a", {0, 1, 2}}, {"b", {3}}})}), {"n1", "n1", "n2", "n3"});
  ASSERT_EQ(p.drain.size(), 1u);
  EXPECT_EQ(p.drain[0].reason, "imgtool: 1 fields differ");
}

TEST(PlanDrain, TheReasonIsCut) {
  std::vector<FieldDiff> diffs;
  for (int i = 0; i < 40; ++i)
    diffs.push_back(Diff("env.SOME_LONG_VARIABLE_" + std::to_string(i), {{"a", {0, 1, 2}}, {"b", {3}}}));
  DrainPlan p = PlanDrain(WithDiffs(diffs), {"n1", "n1", "n2", "n3"});
  ASSERT_EQ(p.drain.size(), 1u);
  EXPECT_LE(p.drain[0].reason.size(), kMaxReasonBytes);
  EXPECT_NE(p.drain[0].reason.find("more differ"), std::string::npos);
}

TEST(IsSafeNodeName, Names) {
  EXPECT_TRUE(IsSafeNodeName("gpu-a01.cluster_x"));
  EXPECT_FALSE(IsSafeNodeName(""));
  EXPECT_FALSE(IsSafeNodeName(std::string(65, 'a')));
  EXPECT_FALSE(IsSafeNodeName("a b"));
  EXPECT_FALSE(IsSafeNodeName("-a"));
}

// The spawn and its outcomes; scontrol itself is driven in tests/slurm_fleet.sh.
TEST(RunDrainPlan, EachNodeSaysWhatHappened) {
  DrainPlan plan{{{"n3", "imgtool: nccl differs", {4}}}, ""};
  auto ok = RunDrainPlan(plan, "true");
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_TRUE(ok[0].drained);
  auto bad = RunDrainPlan(plan, "false");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_FALSE(bad[0].drained);
  EXPECT_EQ(bad[0].error, "exit 1");
  auto missing = RunDrainPlan(plan, "/nonexistent/scontrol");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_FALSE(missing[0].drained);
  EXPECT_NE(missing[0].error.find("No such file"), std::string::npos);
  EXPECT_TRUE(RunDrainPlan({{}, "no majority for nccl (2 and 2 workers)"}, "true").empty());
}

}  // namespace
}  // namespace imgtool::fleet
