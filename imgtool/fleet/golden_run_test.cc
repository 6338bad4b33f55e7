#include "fleet/golden_run.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "oci/digest.h"

namespace imgtool::fleet {
namespace {

TEST(GoldenRun, SameSeedSameDigestOtherSeedOtherDigest) {
  GoldenRunOptions o;
  o.steps = 20;
  auto a = GoldenRun(o);
  auto b = GoldenRun(o);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_TRUE(oci::Digest::Parse(a->weights_digest).ok()) << a->weights_digest;
  EXPECT_EQ(a->weights_digest, b->weights_digest);
  EXPECT_GT(a->seconds, 0);
  o.seed += 1;
  auto c = GoldenRun(o);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c->weights_digest, a->weights_digest);
  o.seed -= 1;
  o.steps = 21;
  auto d = GoldenRun(o);
  ASSERT_TRUE(d.ok());
  EXPECT_NE(d->weights_digest, a->weights_digest);
}

// Nodes run the golden run with their own thread counts; like the trainer's, the bits
// must not depend on it.
TEST(GoldenRun, ThreadsDoNotChangeTheDigest) {
  GoldenRunOptions o;
  o.steps = 10;
  auto one = GoldenRun(o);
  o.threads = 3;
  auto three = GoldenRun(o);
  ASSERT_TRUE(one.ok() && three.ok());
  EXPECT_EQ(one->weights_digest, three->weights_digest);
}

// More steps than the synthetic pool holds: further epochs over it, still deterministic.
TEST(GoldenRun, LongerThanThePool) {
  GoldenRunOptions o;
  o.steps = 130;
  o.threads = 2;
  auto a = GoldenRun(o);
  auto b = GoldenRun(o);
  ASSERT_TRUE(a.ok() && b.ok()) << (a.ok() ? "" : a.error().message);
  EXPECT_EQ(a->weights_digest, b->weights_digest);
}

// The default golden run, pinned: a change here means the trainer's numerics (or the
// synthetic data) changed, and every fleet's recorded golden digests with them.
TEST(GoldenRun, DefaultDigestIsPinned) {
  auto r = GoldenRun(GoldenRunOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->weights_digest, "sha256:d0aeb6ece9465d632730eb30161125faccaabba7746f9365f3c50c07d82b79ed");
  std::printf("golden run (defaults: %d steps, 1 thread): %.3f s\n", GoldenRunOptions{}.steps, r->seconds);
}

TEST(GoldenRun, RejectsBadOptions) {
  GoldenRunOptions o;
  o.steps = 0;
  auto r = GoldenRun(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(r.error().message, "golden run: steps 0 is outside 1..100000");
  o.steps = 5;
  o.threads = 0;
  EXPECT_EQ(GoldenRun(o).error().message, "golden run: threads must be at least 1");
}

}  // namespace
}  // namespace imgtool::fleet
