#include "train/step.h"

#include <gtest/gtest.h>

#include <vector>

namespace trainer {

TEST(Step, ValidatesShape) {
  EXPECT_TRUE(ValidateStepShape({64, 8}, 4).ok());
  EXPECT_EQ(ValidateStepShape({64, 6}, 1).error().message, "--shards 6 must be a power of two");
  EXPECT_EQ(ValidateStepShape({60, 8}, 1).error().message, "--global-batch 60 must be a multiple of --shards 8");
  EXPECT_EQ(ValidateStepShape({64, 8}, 3).error().message,
            "world size 3 must divide --shards 8 (1, 2, 4, ... up to the shard count)");
}

// Summing subtrees first (as ranks do) gives the bits of summing the whole tree at once.
TEST(Step, TreeSumIsTheSameForAnySplit) {
  const int S = 8;
  const size_t n = 1000, stride = 1008;
  std::vector<float> blocks(S * stride);
  for (size_t i = 0; i < blocks.size(); ++i) blocks[i] = 1.0f / static_cast<float>(1 + (i * 7919) % 1013);
  ThreadPool pool(2);
  std::vector<float> whole = blocks;
  TreeSum(whole.data(), S, stride, n, pool);
  for (int W : {2, 4, 8}) {
    std::vector<float> work = blocks, roots(W * stride);
    const int L = S / W;
    for (int r = 0; r < W; ++r) {
      TreeSum(work.data() + r * L * stride, L, stride, n, pool);
      std::copy_n(work.data() + r * L * stride, stride, roots.data() + r * stride);
    }
    TreeSum(roots.data(), W, stride, n, pool);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(roots[i], whole[i]) << "W=" << W << " i=" << i;
  }
  // And it is really a tree, not a left-to-right sum.
  float left = 0;
  for (int s = 0; s < S; ++s) left += blocks[s * stride + 3];
  float tree = ((blocks[3] + blocks[stride + 3]) + (blocks[2 * stride + 3] + blocks[3 * stride + 3])) +
               ((blocks[4 * stride + 3] + blocks[5 * stride + 3]) + (blocks[6 * stride + 3] + blocks[7 * stride + 3]));
  EXPECT_EQ(whole[3], tree);
  (void)left;
}

}  // namespace trainer
