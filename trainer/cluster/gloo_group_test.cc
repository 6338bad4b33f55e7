#include "cluster/gloo_group.h"

#include <gloo/allgather.h>
#include <gloo/context.h>
#include <gtest/gtest.h>

#include <thread>

namespace trainer {

namespace {

int FreePort() {
  auto s = TcpStoreServer::Start("127.0.0.1", 0);
  return s.ok() ? (*s)->port() : 0;
}

ClusterConfig Local(int rank, int size, int port) {
  auto c = ClusterFromFlags(rank, size, "127.0.0.1:" + std::to_string(port), "");
  return *c;
}

}  // namespace

TEST(GlooGroup, ThreeRanksAllgather) {
  const int port = FreePort(), size = 3;
  std::vector<std::vector<float>> out(size, std::vector<float>(size * 2));
  std::vector<std::string> errors(size);
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r) {
    ranks.emplace_back([&, r] {
      auto g = GlooGroup::Join(Local(r, size, port), {});
      if (!g.ok()) {
        errors[static_cast<size_t>(r)] = g.error().message;
        return;
      }
      std::vector<float> in = {float(r), float(10 * r)};
      gloo::AllgatherOptions opts((*g)->context());
      opts.setInput(in.data(), 2);
      opts.setOutput(out[static_cast<size_t>(r)].data(), size * 2);
      gloo::allgather(opts);
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < size; ++r) {
    EXPECT_EQ(errors[static_cast<size_t>(r)], "");
    EXPECT_EQ(out[static_cast<size_t>(r)], (std::vector<float>{0, 0, 1, 10, 2, 20}));
  }
}

TEST(GlooGroup, ChiefNamesTheMissingTask) {
  const int port = FreePort();
  GlooGroupOptions o;
  o.rendezvous_timeout = std::chrono::milliseconds(300);
  ClusterConfig c = Local(0, 3, port);
  c.tasks = {{"chief", 0, "127.0.0.1:" + std::to_string(port)}, {"worker", 0, "127.0.0.1:1"}, {"worker", 1, "h:2"}};
  std::thread worker([&] {
    auto g = GlooGroup::Join(Local(1, 3, port), o);
    EXPECT_FALSE(g.ok());
  });
  auto g = GlooGroup::Join(c, o);
  worker.join();
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(g.error().message, "rendezvous: after 0.3s (--rendezvous-timeout) still missing worker:1 (rank 2, h:2)");
}

TEST(GlooGroup, SizeOneNeedsNoNetwork) {
  auto g = GlooGroup::Join(Local(0, 1, 0), {});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ((*g)->context(), nullptr);
}

}  // namespace trainer
