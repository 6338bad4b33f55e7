#include "train/step.h"

#include <gtest/gtest.h>

#include <barrier>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "cpu/ops.h"

namespace trainer {
namespace {

// W ranks as threads of one process: each collective publishes the inputs, waits for
// everyone, copies in rank order, and waits again before anyone may reuse its buffers.
class ThreadGroup {
 public:
  explicit ThreadGroup(int size) : size(size), barrier(size), inputs(static_cast<size_t>(size)) {}
  const int size;
  std::barrier<> barrier;
  std::vector<const void*> inputs;
};

class ThreadComm : public Comm {
 public:
  ThreadComm(ThreadGroup& group, int rank) : g_(group), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return g_.size; }
  Status AllGather(const float* in, float* out, size_t count) override {
    g_.inputs[static_cast<size_t>(rank_)] = in;
    g_.barrier.arrive_and_wait();
    for (int k = 0; k < g_.size; ++k) {
      const float* src = static_cast<const float*>(g_.inputs[static_cast<size_t>(k)]);
      if (out + k * count != src) std::memcpy(out + k * count, src, count * sizeof(float));
    }
    g_.barrier.arrive_and_wait();
    return Status::Ok();
  }
  Status Broadcast(void* data, size_t bytes, int root) override {
    g_.inputs[static_cast<size_t>(rank_)] = data;
    g_.barrier.arrive_and_wait();
    if (rank_ != root) std::memcpy(data, g_.inputs[static_cast<size_t>(root)], bytes);
    g_.barrier.arrive_and_wait();
    return Status::Ok();
  }

 private:
  ThreadGroup& g_;
  int rank_;
};

std::vector<float> RandomFloats(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

}  // namespace

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

// The fused row-slice kernel has the bits of "linear_backward per shard, then TreeSum",
// for every rank's rows at W = 1, 2, 4, 8, for thread-task slices, and for slices that
// end inside a register tile; also for a narrow layer (the plain loop).
TEST(Step, WeightGradTreeEqualsPerShardThenTreeSum) {
  std::mt19937 rng(9);
  ThreadPool pool(2);
  for (auto shape : {std::tuple{8, 8, 784, 128}, std::tuple{4, 3, 784, 128}, std::tuple{8, 2, 13, 10}}) {
    // Variables, not structured bindings: clang 14 cannot capture bindings in the lambda.
    const int S = std::get<0>(shape), N = std::get<1>(shape), I = std::get<2>(shape), O = std::get<3>(shape);
    const size_t dstride = static_cast<size_t>(N) * O + 37;  // blocks need not be packed
    auto x = RandomFloats(static_cast<size_t>(S) * N * I, rng), dout = RandomFloats(S * dstride, rng);
    // Example j's row is stored at a scrambled place, as the dataset rows a permutation picks.
    std::vector<const float*> rows(static_cast<size_t>(S) * N);
    for (size_t j = 0; j < rows.size(); ++j) rows[j] = &x[((j * 5 + 3) % rows.size()) * I];
    std::vector<float> in(rows.size() * I);  // (S*N, I): the same rows, packed
    for (size_t j = 0; j < rows.size(); ++j) std::copy_n(rows[j], I, &in[j * I]);

    const size_t wstride = static_cast<size_t>(I) * O;
    std::vector<float> blocks(S * wstride), db(O);
    for (int s = 0; s < S; ++s) {
      cpu::linear_backward(nullptr, &blocks[s * wstride], db.data(), &dout[s * dstride], &in[s * N * I], nullptr, N, I,
                           O);
    }
    TreeSum(blocks.data(), S, wstride, wstride, pool);  // block 0: the reference dW (I, O)

    auto check = [&](int begin, int end, const std::string& what) {
      std::vector<float> dw(static_cast<size_t>(end - begin) * O);
      cpu::linear_weight_grad_tree(dw.data(), rows.data(), dout.data(), dstride, S, N, begin, end, O);
      for (size_t k = 0; k < dw.size(); ++k) {
        ASSERT_EQ(dw[k], blocks[begin * O + k]) << what << " row " << begin + k / O << " col " << k % O;
      }
    };
    for (int W : {1, 2, 4, 8}) {
      for (int r = 0; r < W; ++r) {
        RowSlice rs = OwnedRows(r, W);
        if (I == MlpLayout::kIn) check(rs.begin, rs.end, "W=" + std::to_string(W) + " rank " + std::to_string(r));
      }
    }
    for (int b = 0; b < I; b += 16) check(b, std::min(b + 16, I), "task");
    check(3, 10, "ragged");
    check(0, I, "all");
  }
}

// OwnedRows tiles W1's rows in rank order, for any W, in slices of at most ceil(784 / W).
TEST(Step, OwnedRowsTileW1) {
  for (int W : {1, 2, 4, 8, 16, 32, 64}) {
    int next = 0;
    for (int r = 0; r < W; ++r) {
      RowSlice rs = OwnedRows(r, W);
      EXPECT_EQ(rs.begin, next) << W;
      EXPECT_LE(rs.end - rs.begin, (MlpLayout::kIn + W - 1) / W);
      next = rs.end;
    }
    EXPECT_EQ(next, MlpLayout::kIn) << W;
  }
}

// The step as it was before W1 was split: full shard gradients, TreeSum, Adam on all.
void ReferenceStep(const Split& train, StepShape shape, uint64_t seed, const std::vector<int32_t>& perm, int step,
                   int64_t t, TrainState& st, ThreadPool& pool) {
  const int n = shape.global_batch / shape.shards;
  const size_t stride = (MlpLayout::kCount + 1 + 15) / 16 * 16;
  std::vector<float> blocks(shape.shards * stride), x(static_cast<size_t>(n) * kImageSize), mask(n * 128);
  std::vector<uint8_t> y(static_cast<size_t>(n));
  MlpWorkspace<float> ws(n);
  for (int s = 0; s < shape.shards; ++s) {
    for (int i = 0; i < n; ++i) {
      size_t ex = static_cast<size_t>(perm[static_cast<size_t>(step) * shape.global_batch + s * n + i]);
      std::copy_n(&train.images[ex * kImageSize], kImageSize, &x[static_cast<size_t>(i) * kImageSize]);
      y[static_cast<size_t>(i)] = train.labels[ex];
    }
    cpu::dropout_mask(mask.data(), n, 128, kDropoutRate, seed, 0, step, s * n);
    float* g = &blocks[s * stride];
    g[MlpLayout::kCount] = static_cast<float>(
        ShardGradient(st.params.data(), x.data(), y.data(), n, mask.data(), 1.0 / shape.global_batch, g, ws));
  }
  TreeSum(blocks.data(), shape.shards, stride, MlpLayout::kCount + 1, pool);
  cpu::adam_update(st.params.data(), blocks.data(), st.adam_m.data(), st.adam_v.data(),
                   static_cast<int>(MlpLayout::kCount), cpu::AdamConfig{}, t);
}

// W = 1, 2, 4, 8 ranks (threads) reach the parameters of the old full-gradient step, and
// after GatherMoments every rank's checkpoint is byte for byte the old one.
TEST(Step, EveryWorldSizeGivesTheOldStepsBitsAndCheckpoint) {
  std::mt19937 rng(4);
  Split train;
  train.count = 512;
  std::uniform_real_distribution<float> pixel(0, 1);
  for (int i = 0; i < train.count * kImageSize; ++i) train.images.push_back(pixel(rng));
  for (int i = 0; i < train.count; ++i) train.labels.push_back(static_cast<uint8_t>(rng() % kClasses));
  const StepShape shape{64, 8};
  const uint64_t seed = 17;
  const int steps = 4;
  const RunShape run{shape.global_batch, shape.shards, train.count, 1e-3f, MlpLayout::kCount};
  const auto perm = EpochPermutation(seed, 0, train.count);
  auto fresh = [&] {
    TrainState st;
    st.seed = seed;
    st.step = steps;
    st.step_in_epoch = steps;
    st.params.resize(MlpLayout::kCount);
    InitParams(st.params.data(), seed);
    st.adam_m.assign(MlpLayout::kCount, 0.0f);
    st.adam_v.assign(MlpLayout::kCount, 0.0f);
    return st;
  };

  TrainState want = fresh();
  ThreadPool pool(2);
  for (int s = 0; s < steps; ++s) ReferenceStep(train, shape, seed, perm, s, s + 1, want, pool);
  const std::string want_bytes = SerializeCheckpoint(want, run);

  for (int W : {1, 2, 4, 8}) {
    ThreadGroup group(W);
    std::vector<std::string> got(static_cast<size_t>(W));
    std::vector<std::thread> ranks;
    for (int r = 0; r < W; ++r) {
      ranks.emplace_back([&, r] {
        ThreadComm comm(group, r);
        ThreadPool own(r % 2 + 1);  // thread counts need not agree
        TrainStep step(train, shape, seed, cpu::AdamConfig{}, comm, own);
        TrainState st = fresh();
        double loss = 0;
        for (int s = 0; s < steps; ++s) {
          ASSERT_TRUE(step.Run(st.params.data(), st.adam_m.data(), st.adam_v.data(), perm, 0, s, s + 1, &loss).ok());
        }
        ASSERT_TRUE(step.GatherMoments(st.adam_m.data(), st.adam_v.data()).ok());
        got[static_cast<size_t>(r)] = SerializeCheckpoint(st, run);
      });
    }
    for (auto& t : ranks) t.join();
    for (int r = 0; r < W; ++r) EXPECT_TRUE(got[static_cast<size_t>(r)] == want_bytes) << "W=" << W << " rank " << r;
  }
}

}  // namespace trainer
