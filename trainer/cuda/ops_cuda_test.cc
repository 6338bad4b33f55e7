// Every GPU op (cuda/ops.h) against its CPU reference (cpu/ops.h): fresh random inputs on
// every run (the seed is printed; TRAINER_TEST_SEED replays one), outputs poisoned with NaN
// before the call, max relative error below 1e-5 and no NaN; the ops that ops.h says give
// the reference's values must give them exactly. Without a GPU each test is skipped with
// the runtime's reason.
#include "cuda/ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/thread_pool.h"
#include "cpu/ops.h"
#include "cuda/cuda_test_util.h"
#include "train/step.h"

namespace trainer::cuda {
namespace {

using testing::Buf;
using testing::Compare;
using testing::Report;
using testing::Uniform;

std::string Shape(int a, int b, int c = -1) {
  char s[48];
  if (c >= 0) {
    std::snprintf(s, sizeof(s), "(%d,%d,%d)", a, b, c);
  } else {
    std::snprintf(s, sizeof(s), "(%d,%d)", a, b);
  }
  return s;
}

class OpsCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_GPU();
    auto c = Context::Create(0);
    ASSERT_TRUE(c.ok()) << c.error().message;
    ctx_ = std::move(*c);
    rng_.seed(testing::TestSeed() + static_cast<uint32_t>(std::hash<std::string>{}(
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name())));
  }
  std::unique_ptr<Context> ctx_;
  std::mt19937 rng_;
};

// The shapes of the step (layer 1: 8-row shards and a 64-row batch; layer 2), and odd
// ones that end on no tile.
const std::vector<std::tuple<int, int, int>> kLinearShapes = {
    {8, 784, 128}, {64, 784, 128}, {8, 128, 10}, {64, 128, 10}, {37, 53, 29}};

TEST_F(OpsCuda, LinearForward) {
  for (auto [N, I, O] : kLinearShapes) {
    auto in = Uniform(static_cast<size_t>(N) * I, rng_, 0, 1), w = Uniform(static_cast<size_t>(I) * O, rng_);
    auto b = Uniform(static_cast<size_t>(O), rng_);
    std::vector<float> ref(static_cast<size_t>(N) * O);
    cpu::linear_forward(ref.data(), in.data(), w.data(), b.data(), N, I, O);
    Buf<float> din(in), dw(w), db(b), out(ref.size());
    out.Poison();
    ASSERT_OK(linear_forward(*ctx_, out.get(), din.get(), dw.get(), db.get(), N, I, O));
    Report("linear_forward " + Shape(N, I, O), Compare(out.Get(), ref), false);
  }
}

TEST_F(OpsCuda, LinearBackward) {
  for (auto [N, I, O] : kLinearShapes) {
    auto in = Uniform(static_cast<size_t>(N) * I, rng_), w = Uniform(static_cast<size_t>(I) * O, rng_);
    auto dout = Uniform(static_cast<size_t>(N) * O, rng_);
    std::vector<float> rdin(static_cast<size_t>(N) * I), rdw(static_cast<size_t>(I) * O), rdb(static_cast<size_t>(O));
    cpu::linear_backward(rdin.data(), rdw.data(), rdb.data(), dout.data(), in.data(), w.data(), N, I, O);
    Buf<float> gin(in), gw(w), gdout(dout), din(rdin.size()), dw(rdw.size()), db(rdb.size());
    din.Poison();
    dw.Poison();
    db.Poison();
    ASSERT_OK(linear_backward(*ctx_, din.get(), dw.get(), db.get(), gdout.get(), gin.get(), gw.get(), N, I, O));
    Report("linear_backward.din " + Shape(N, I, O), Compare(din.Get(), rdin), false);
    Report("linear_backward.dw " + Shape(N, I, O), Compare(dw.Get(), rdw), false);
    Report("linear_backward.db " + Shape(N, I, O), Compare(db.Get(), rdb), true);
    // linear_backward_input alone: the same din.
    din.Poison();
    ASSERT_OK(linear_backward_input(*ctx_, din.get(), gdout.get(), gw.get(), N, I, O));
    Report("linear_backward_input " + Shape(N, I, O), Compare(din.Get(), rdin), false);
  }
}

TEST_F(OpsCuda, BiasGrad) {
  for (auto [N, O] : {std::pair{8, 128}, std::pair{8, 10}, std::pair{1000, 3}}) {
    auto dout = Uniform(static_cast<size_t>(N) * O, rng_);
    std::vector<float> ref(static_cast<size_t>(O));
    cpu::bias_grad(ref.data(), dout.data(), N, O);
    Buf<float> g(dout), db(ref.size());
    db.Poison();
    ASSERT_OK(bias_grad(*ctx_, db.get(), g.get(), N, O));
    Report("bias_grad " + Shape(N, O), Compare(db.Get(), ref), true);
  }
}

// The step's per-shard forms: groups of rows, outputs strided into per-shard slots.
TEST_F(OpsCuda, GroupedGradients) {
  const int G = 8, N = 8, I = 128, O = 10;
  const size_t dw_stride = 1424, db_stride = 1424;  // slots inside a wider per-shard block
  auto in = Uniform(static_cast<size_t>(G) * N * I, rng_), dout = Uniform(static_cast<size_t>(G) * N * O, rng_);
  std::vector<float> rdw(G * dw_stride, 0.0f), rdb(G * db_stride, 0.0f);
  for (int g = 0; g < G; ++g) {
    std::vector<float> dw(static_cast<size_t>(I) * O), db(static_cast<size_t>(O));
    cpu::linear_backward(static_cast<float*>(nullptr), dw.data(), db.data(), &dout[static_cast<size_t>(g) * N * O],
                         &in[static_cast<size_t>(g) * N * I], nullptr, N, I, O);
    std::memcpy(&rdw[g * dw_stride], dw.data(), dw.size() * sizeof(float));
    std::memcpy(&rdb[g * db_stride], db.data(), db.size() * sizeof(float));
  }
  // The slots the ops must write start as NaN; the gaps between them as the reference's zeros.
  std::vector<float> dw0 = rdw, db0 = rdb;
  for (int g = 0; g < G; ++g) {
    std::fill_n(&dw0[g * dw_stride], static_cast<size_t>(I) * O, NAN);
    std::fill_n(&db0[g * db_stride], static_cast<size_t>(O), NAN);
  }
  Buf<float> gin(in), gdout(dout), dw(dw0), db(db0);
  ASSERT_OK(linear_weight_grad_groups(*ctx_, dw.get(), dw_stride, gin.get(), I, static_cast<size_t>(N) * I, gdout.get(),
                                      static_cast<size_t>(N) * O, G, N, I, O));
  ASSERT_OK(bias_grad_groups(*ctx_, db.get(), db_stride, gdout.get(), static_cast<size_t>(N) * O, G, N, O));
  Report("linear_weight_grad_groups (8x(8,128,10))", Compare(dw.Get(), rdw), false);
  Report("bias_grad_groups (8x(8,10))", Compare(db.Get(), rdb), true);
}

TEST_F(OpsCuda, LinearWeightGradTree) {
  const int S = 8, N = 8, I = 784, O = 128;
  auto x = Uniform(static_cast<size_t>(S) * N * I, rng_, 0, 1);
  auto dout = Uniform(static_cast<size_t>(S) * N * O, rng_, -0.01f, 0.01f);
  std::vector<const float*> rows(static_cast<size_t>(S) * N);
  for (size_t r = 0; r < rows.size(); ++r) rows[r] = &x[r * I];
  Buf<float> gx(x), gdout(dout), scratch(static_cast<size_t>(S) * I * O);
  for (auto [lo, hi] : {std::pair{0, 784}, std::pair{392, 784}, std::pair{5, 100}}) {
    std::vector<float> ref(static_cast<size_t>(hi - lo) * O);
    cpu::linear_weight_grad_tree(ref.data(), rows.data(), dout.data(), static_cast<size_t>(N) * O, S, N, lo, hi, O);
    Buf<float> dw(ref.size());
    dw.Poison();
    scratch.Poison();
    ASSERT_OK(linear_weight_grad_tree(*ctx_, dw.get(), gx.get(), I, gdout.get(), static_cast<size_t>(N) * O, S, N, lo,
                                      hi, O, scratch.get()));
    Report("linear_weight_grad_tree rows " + Shape(lo, hi), Compare(dw.Get(), ref), false);
  }
}

TEST_F(OpsCuda, Relu) {
  const int n = 8 * 128 + 3;
  auto in = Uniform(n, rng_), dout = Uniform(n, rng_);
  std::vector<float> out(n), din(n);
  cpu::relu_forward(out.data(), in.data(), n);
  cpu::relu_backward(din.data(), dout.data(), out.data(), n);
  Buf<float> gin(in), gdout(dout), gout(n), gdin(n);
  gout.Poison();
  gdin.Poison();
  ASSERT_OK(relu_forward(*ctx_, gout.get(), gin.get(), n));
  Report("relu_forward (cuDNN)", Compare(gout.Get(), out), true);
  gout.Put(out);  // backward from the reference's forward output
  ASSERT_OK(relu_backward(*ctx_, gdin.get(), gdout.get(), gout.get(), n));
  Report("relu_backward (cuDNN)", Compare(gdin.Get(), din), true);
  ASSERT_OK(relu_backward(*ctx_, gdout.get(), gdout.get(), gout.get(), n));  // din aliasing dout
  Report("relu_backward in place (cuDNN)", Compare(gdout.Get(), din), true);
}

TEST_F(OpsCuda, Dropout) {
  const int N = 64, C = 130;  // a column count that is not a multiple of 4
  const uint64_t seed = rng_();
  const int epoch = static_cast<int>(rng_() % 50), step = static_cast<int>(rng_() % 937), first = 24;
  std::vector<float> ref(static_cast<size_t>(N) * C);
  cpu::dropout_mask(ref.data(), N, C, 0.2f, seed, epoch, step, first);
  Buf<float> mask(ref.size());
  mask.Poison();
  ASSERT_OK(dropout_mask(*ctx_, mask.get(), N, C, 0.2f, seed, epoch, step, first));
  Report("dropout_mask", Compare(mask.Get(), ref), true);
  Buf<int32_t> epoch_step(std::vector<int32_t>{epoch, step});
  mask.Poison();
  ASSERT_OK(dropout_mask(*ctx_, mask.get(), N, C, 0.2f, seed, epoch_step.get(), first));
  Report("dropout_mask (device epoch, step)", Compare(mask.Get(), ref), true);

  const int n = N * C;
  auto in = Uniform(static_cast<size_t>(n), rng_);
  std::vector<float> out(static_cast<size_t>(n)), din(static_cast<size_t>(n));
  cpu::dropout_forward(out.data(), in.data(), ref.data(), n);
  cpu::dropout_backward(din.data(), in.data(), ref.data(), n);
  Buf<float> gin(in), gout(static_cast<size_t>(n));
  gout.Poison();
  ASSERT_OK(dropout_forward(*ctx_, gout.get(), gin.get(), mask.get(), n));
  Report("dropout_forward", Compare(gout.Get(), out), true);
  gout.Poison();
  ASSERT_OK(dropout_backward(*ctx_, gout.get(), gin.get(), mask.get(), n));
  Report("dropout_backward", Compare(gout.Get(), din), true);
}

TEST_F(OpsCuda, SoftmaxXent) {
  for (auto [N, C] : {std::pair{8, 10}, std::pair{64, 10}, std::pair{33, 256}}) {
    auto logits = Uniform(static_cast<size_t>(N) * C, rng_, -8, 8);
    std::vector<uint8_t> labels(static_cast<size_t>(N));
    for (auto& l : labels) l = static_cast<uint8_t>(rng_() % C);
    const double scale = 1.0 / 64;
    std::vector<float> ref(logits.size());
    const double loss = cpu::softmax_xent(ref.data(), logits.data(), labels.data(), N, C, scale);
    Buf<float> gl(logits), dl(ref.size());
    Buf<uint8_t> gy(labels);
    Buf<double> gloss(1);
    dl.Poison();
    gloss.Poison();
    ASSERT_OK(softmax_xent(*ctx_, dl.get(), gl.get(), gy.get(), N, C, scale, gloss.get()));
    Report("softmax_xent.dlogits " + Shape(N, C), Compare(dl.Get(), ref), true);
    // The loss goes through log(), whose last bit may differ from libm's: close, not equal.
    Report("softmax_xent.loss " + Shape(N, C), Compare(gloss.Get(), std::vector<double>{loss}), false);
  }
  // Groups (the step's shards): each group's loss as float in a strided slot.
  const int G = 8, N = 8, C = 10;
  const size_t stride = 1424;
  auto logits = Uniform(static_cast<size_t>(G) * N * C, rng_, -8, 8);
  std::vector<uint8_t> labels(static_cast<size_t>(G) * N);
  for (auto& l : labels) l = static_cast<uint8_t>(rng_() % C);
  std::vector<float> ref(logits.size()), ref_loss(G);
  for (int g = 0; g < G; ++g) {
    const size_t at = static_cast<size_t>(g) * N * C;
    ref_loss[static_cast<size_t>(g)] = static_cast<float>(
        cpu::softmax_xent(&ref[at], &logits[at], &labels[static_cast<size_t>(g) * N], N, C, 1.0 / 64));
  }
  Buf<float> gl(logits), dl(ref.size()), slots(G * stride);
  Buf<uint8_t> gy(labels);
  dl.Poison();
  slots.Poison();
  ASSERT_OK(softmax_xent_groups(*ctx_, dl.get(), gl.get(), gy.get(), G, N, C, 1.0 / 64, slots.get(), stride));
  auto got = slots.Get();
  std::vector<float> got_loss(G);
  for (int g = 0; g < G; ++g) got_loss[static_cast<size_t>(g)] = got[g * stride];
  Report("softmax_xent_groups.dlogits (8x(8,10))", Compare(dl.Get(), ref), true);
  Report("softmax_xent_groups.loss (8x(8,10))", Compare(got_loss, ref_loss), false);
}

TEST_F(OpsCuda, AdamUpdate) {
  const int n = 101770;
  cpu::AdamConfig c;
  for (int64_t t : {int64_t{1}, int64_t{2}, int64_t{937}, int64_t{9370}}) {
    auto p = Uniform(n, rng_), g = Uniform(n, rng_, -0.01f, 0.01f), m = Uniform(n, rng_, -0.01f, 0.01f);
    auto v = Uniform(n, rng_, 0, 1e-4f);
    auto rp = p, rm = m, rv = v;
    cpu::adam_update(rp.data(), g.data(), rm.data(), rv.data(), n, c, t);
    for (int on_device = 0; on_device < 2; ++on_device) {
      Buf<float> gp(p), gg(g), gm(m), gv(v);
      if (on_device == 0) {
        ASSERT_OK(adam_update(*ctx_, gp.get(), gg.get(), gm.get(), gv.get(), n, c, t));
      } else {
        Buf<float> alpha(std::vector<float>{cpu::adam_alpha(c, t)});
        ASSERT_OK(adam_update(*ctx_, gp.get(), gg.get(), gm.get(), gv.get(), n, c, alpha.get()));
        (void)alpha.Get();  // keep it alive until the kernel ran
      }
      const std::string name =
          std::string("adam_update") + (on_device ? " (device alpha)" : "") + " t=" + std::to_string(t);
      Report(name + " p", Compare(gp.Get(), rp), true);
      Report(name + " m", Compare(gm.Get(), rm), true);
      Report(name + " v", Compare(gv.Get(), rv), true);
    }
  }
}

TEST_F(OpsCuda, AddInplaceAndTreeSum) {
  const size_t n = 1419;
  auto a = Uniform(n, rng_), b = Uniform(n, rng_);
  auto ref = a;
  cpu::add_inplace(ref.data(), b.data(), n);
  Buf<float> ga(a), gb(b);
  ASSERT_OK(add_inplace(*ctx_, ga.get(), gb.get(), n));
  Report("add_inplace", Compare(ga.Get(), ref), true);

  ThreadPool pool(1);
  for (int count : {1, 2, 8, 32}) {
    const size_t stride = 1424;
    auto blocks = Uniform(static_cast<size_t>(count) * stride, rng_);
    auto cpu_blocks = blocks;
    TreeSum(cpu_blocks.data(), count, stride, n, pool);
    std::vector<float> tree(cpu_blocks.begin(), cpu_blocks.begin() + static_cast<long>(n));
    Buf<float> gblocks(blocks), out(n);
    out.Poison();
    ASSERT_OK(tree_sum(*ctx_, out.get(), gblocks.get(), count, stride, n));
    Report("tree_sum count=" + std::to_string(count), Compare(out.Get(), tree), true);
  }
  Buf<float> out(n), blocks(n * 3);
  EXPECT_FALSE(tree_sum(*ctx_, out.get(), blocks.get(), 3, n, n).ok());  // not a power of two
}

TEST_F(OpsCuda, BroadcastAndGather) {
  const int count = 300, B = 64, I = 784;
  auto images = Uniform(static_cast<size_t>(count) * I, rng_, 0, 1);
  std::vector<uint8_t> labels(count);
  for (auto& l : labels) l = static_cast<uint8_t>(rng_() % 10);
  std::vector<int32_t> idx(B);
  for (auto& i : idx) i = static_cast<int32_t>(rng_() % count);
  std::vector<float> rx(static_cast<size_t>(B) * I);
  std::vector<uint8_t> ry(B);
  for (int j = 0; j < B; ++j) {
    std::memcpy(&rx[static_cast<size_t>(j) * I], &images[static_cast<size_t>(idx[j]) * I], I * sizeof(float));
    ry[j] = labels[static_cast<size_t>(idx[j])];
  }
  Buf<float> gimages(images), x(rx.size());
  Buf<uint8_t> glabels(labels), y(ry.size());
  Buf<int32_t> gidx(idx);
  x.Poison();
  y.Poison();
  ASSERT_OK(gather_batch(*ctx_, x.get(), y.get(), gimages.get(), glabels.get(), gidx.get(), B, I));
  Report("gather_batch.x", Compare(x.Get(), rx), true);
  Report("gather_batch.y", Compare(y.Get(), ry), true);

  const int N = 7, O = 10;
  auto b = Uniform(O, rng_);
  std::vector<float> rows(static_cast<size_t>(N) * O);
  for (int r = 0; r < N; ++r) std::memcpy(&rows[static_cast<size_t>(r) * O], b.data(), O * sizeof(float));
  Buf<float> gb(b), out(rows.size());
  out.Poison();
  ASSERT_OK(broadcast_rows(*ctx_, out.get(), gb.get(), N, O));
  Report("broadcast_rows", Compare(out.Get(), rows), true);
}

// The comparison itself: a NaN never passes, and a poisoned output that an op leaves
// unwritten is caught (this one needs no GPU).
TEST(OpsCudaNoGpu, NaNNeverPasses) {
  std::vector<float> ref = {1, 2, 3}, nan = {1, NAN, 3}, inf = {1, INFINITY, 3};
  EXPECT_EQ(Compare(ref, ref).max_rel, 0.0);
  EXPECT_EQ(Compare(nan, ref).bad, 1u);
  EXPECT_TRUE(std::isinf(Compare(nan, ref).max_rel));
  EXPECT_EQ(Compare(inf, ref).bad, 1u);
  EXPECT_EQ(Compare(ref, nan).bad, 1u);
  std::vector<float> close = {1, 2, 3.00001f};
  EXPECT_LT(Compare(close, ref).max_rel, 1e-5);
  EXPECT_EQ(Compare(close, ref).unequal, 1u);
  // Same bits means the sign of zero too (cuDNN's ReLU against the reference's).
  std::vector<float> zero = {0.0f, 1, 2}, negative_zero = {-0.0f, 1, 2};
  EXPECT_EQ(Compare(negative_zero, zero).unequal, 1u);
  EXPECT_EQ(Compare(zero, zero).unequal, 0u);
}

}  // namespace
}  // namespace trainer::cuda
