#include "cluster/cluster_config.h"

#include <gtest/gtest.h>

namespace trainer {

TEST(TfConfig, ChiefIsRankZeroThenWorkers) {
  auto c = ParseTfConfig(R"({"cluster": {"chief": ["h0:1000"], "worker": ["h1:1001", "h2:1002"]},
                             "task": {"type": "worker", "index": 1}})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->world_size, 3);
  EXPECT_EQ(c->rank, 2);
  EXPECT_EQ(c->tasks[0].Name(), "chief:0");
  EXPECT_EQ(c->store.host, "h0");
  EXPECT_EQ(c->store.port, 1000);
  EXPECT_EQ(c->self_host, "h2");
}

TEST(TfConfig, WorkerZeroIsChiefWithoutChief) {
  auto c = ParseTfConfig(R"({"cluster": {"worker": ["[::1]:5000", "127.0.0.1:5001"]},
                             "task": {"type": "worker", "index": 0}})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->rank, 0);
  EXPECT_EQ(c->store.host, "::1");
  EXPECT_EQ(c->store.port, 5000);
}

TEST(TfConfig, MalformedInputsNameTheProblem) {
  struct Case {
    const char* json;
    const char* error;
  } cases[] = {
      {"{not json", "TF_CONFIG is not valid JSON"},
      {"[]", "TF_CONFIG must be a JSON object"},
      {R"({"task": {"type": "worker", "index": 0}})", "TF_CONFIG has no \"cluster\" object"},
      {R"({"cluster": {"worker": ["a:1"]}})", "TF_CONFIG has no \"task\" object"},
      {R"({"cluster": {"ps": ["a:1"]}, "task": {"type": "ps", "index": 0}})",
       "TF_CONFIG cluster.ps is not supported (only chief and worker)"},
      {R"({"cluster": {"worker": ["a"]}, "task": {"type": "worker", "index": 0}})",
       "TF_CONFIG: cluster.worker[0]: address \"a\" is not host:port"},
      {R"({"cluster": {"worker": ["a:99999"]}, "task": {"type": "worker", "index": 0}})",
       "TF_CONFIG: cluster.worker[0]: address \"a:99999\" has a port outside 1..65535"},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 3}})",
       "TF_CONFIG task worker:3 is not in the cluster"},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": "0"}})",
       "TF_CONFIG task.index must be an integer"},
      {R"({"cluster": {"chief": ["a:1", "b:2"]}, "task": {"type": "chief", "index": 0}})",
       "TF_CONFIG cluster.chief must hold at most one address"},
      {R"({"cluster": {}, "task": {"type": "worker", "index": 0}})", "TF_CONFIG cluster lists no chief and no worker"},
  };
  for (const auto& c : cases) {
    auto r = ParseTfConfig(c.json);
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
    EXPECT_EQ(r.error().message, c.error);
  }
}

// Issue 24: imgtool's JSON reader and its depth cap, for the trainer and the fleet check.
TEST(TfConfig, NestingPastTheJsonCapIsRefused) {
  std::string deep = R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0}, "x": )" +
                     std::string(60'000, '[') + std::string(60'000, ']') + "}";
  auto r = ParseTfConfig(deep);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(r.error().message, "TF_CONFIG: nested deeper than 128 levels");
  EXPECT_TRUE(
      ParseTfConfig(R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0}, "x": [[1]]})").ok());
}

TEST(TfConfig, LocalTasksCountsThisHostsAddresses) {
  auto c = ParseTfConfig(R"({"cluster": {"chief": ["10.0.0.1:2222"], "worker": ["10.0.0.1:2223", "10.0.0.2:2222"]},
                             "task": {"type": "worker", "index": 0}})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(LocalTasks(*c), 2);  // the chief and this worker share 10.0.0.1
  auto flags = ClusterFromFlags(1, 4, "127.0.0.1:29500", "");
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(LocalTasks(*flags), 4);  // no addresses: every task counts as local
}

TEST(ClusterFromFlags, Validates) {
  auto ok = ClusterFromFlags(1, 2, "127.0.0.1:2000", "");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->self_host, "127.0.0.1");
  EXPECT_EQ(ClusterFromFlags(2, 2, "a:1", "").error().message, "--rank 2 is outside 0..1");
  EXPECT_EQ(ClusterFromFlags(0, 2, "", "").error().message,
            "--world-size > 1 needs --rendezvous HOST:PORT (or TF_CONFIG)");
  EXPECT_TRUE(ClusterFromFlags(0, 1, "", "").ok());
}

}  // namespace trainer
