#include "cluster/gloo_group.h"

#include <gloo/allgather.h>
#include <gloo/context.h>
#include <gtest/gtest.h>

#include <atomic>
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

GlooGroupOptions WithToken(const std::string& secret, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  GlooGroupOptions o;
  o.rendezvous_timeout = timeout;
  o.token = *JobToken::FromSecret(secret, "IMGTOOL_FLEET_TOKEN");
  return o;
}

// An allgather of each rank's number over the group: every rank must see 0, 1, ..., size-1.
bool Allgathers(GlooGroup& g) {
  std::vector<float> in = {float(g.rank())}, out(static_cast<size_t>(g.size()));
  gloo::AllgatherOptions opts(g.context());
  opts.setInput(in.data(), 1);
  opts.setOutput(out.data(), out.size());
  gloo::allgather(opts);
  for (int r = 0; r < g.size(); ++r) {
    if (out[static_cast<size_t>(r)] != float(r)) return false;
  }
  return true;
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
  c.tasks = {{"chief", 0, "127.0.0.1:" + std::to_string(port), ""},
             {"worker", 0, "127.0.0.1:1", ""},
             {"worker", 1, "h:2", ""}};
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

// Gloo's own keys (a host name and the pair addresses per rank) are each written by
// their rank, so the group forms through a store that binds keys to ranks, with a token.
TEST(GlooGroup, ThreeRanksWithAJobToken) {
  const int port = FreePort(), size = 3;
  std::atomic<int> ok{0};
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r) {
    ranks.emplace_back([&, r] {
      auto g = GlooGroup::Join(Local(r, size, port), WithToken("correct-horse-battery-staple"));
      EXPECT_TRUE(g.ok()) << g.error().message;
      if (g.ok() && Allgathers(**g)) ++ok;
    });
  }
  for (auto& t : ranks) t.join();
  EXPECT_EQ(ok.load(), size);
}

// A process with another token is refused and takes no place: the real rank joins after it.
TEST(GlooGroup, AProcessWithAnotherTokenCannotJoin) {
  const int port = FreePort();
  std::atomic<int> ok{0};
  std::thread chief([&] {
    auto g = GlooGroup::Join(Local(0, 2, port), WithToken("correct-horse-battery-staple"));
    EXPECT_TRUE(g.ok()) << g.error().message;
    if (g.ok() && Allgathers(**g)) ++ok;
  });
  auto outsider = GlooGroup::Join(Local(1, 2, port), WithToken("an-outsiders-guess-of-the-token"));
  ASSERT_FALSE(outsider.ok());
  EXPECT_EQ(outsider.error().kind, ErrorKind::kDenied);
  EXPECT_NE(outsider.error().message.find("refused the claim of rank 1: a wrong proof of the job token"),
            std::string::npos)
      << outsider.error().message;
  auto g = GlooGroup::Join(Local(1, 2, port), WithToken("correct-horse-battery-staple"));
  ASSERT_TRUE(g.ok()) << g.error().message;
  if (Allgathers(**g)) ++ok;
  chief.join();
  EXPECT_EQ(ok.load(), 2);
}

// Two processes started as rank 1: the second is refused naming both, and the chief
// refuses to form the group, so no rank trains in a group with a double.
TEST(GlooGroup, ARankClaimedTwiceStopsTheGroup) {
  const int port = FreePort(), size = 3;
  GlooGroupOptions o;
  o.rendezvous_timeout = std::chrono::seconds(20);
  std::vector<Result<std::unique_ptr<GlooGroup>>> out;
  for (int i = 0; i < 4; ++i) out.emplace_back(MakeError(ErrorKind::kInternal, "did not run"));
  std::atomic<int> ones_done{0};
  std::thread chief([&] { out[0] = GlooGroup::Join(Local(0, size, port), o); });
  std::thread one_a([&] {
    out[1] = GlooGroup::Join(Local(1, size, port), o);
    ++ones_done;
  });
  std::thread one_b([&] {
    out[2] = GlooGroup::Join(Local(1, size, port), o);
    ++ones_done;
  });
  // Whichever of the two claims second is refused at once; then rank 2 comes.
  while (ones_done.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::thread two([&] { out[3] = GlooGroup::Join(Local(2, size, port), o); });
  for (auto* t : {&chief, &one_a, &one_b, &two}) t->join();
  const std::vector<const Result<std::unique_ptr<GlooGroup>>*> all = {&out[0], &out[1], &out[2], &out[3]};
  int claimed_twice = 0, refused_by_chief = 0;
  for (const auto* r : all) {
    ASSERT_FALSE(r->ok());
    EXPECT_EQ(r->error().kind, ErrorKind::kDenied) << r->error().message;
    const std::string& m = r->error().message;
    EXPECT_NE(m.find("rank 1 is claimed twice: first by 127.0.0.1:"), std::string::npos) << m;
    if (m.find("refused the claim of rank 1") != std::string::npos) ++claimed_twice;
    if (m.find("the chief refused to form the group") != std::string::npos) ++refused_by_chief;
  }
  EXPECT_EQ(claimed_twice, 1);
  EXPECT_EQ(refused_by_chief, 2);  // the rank 1 that got its claim, and rank 2
  EXPECT_EQ(out[0].error().message.rfind("rendezvous: rank 1 is claimed twice", 0), 0u) << out[0].error().message;
}

TEST(GlooGroup, SizeOneNeedsNoNetwork) {
  auto g = GlooGroup::Join(Local(0, 1, 0), {});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ((*g)->context(), nullptr);
}

}  // namespace trainer
