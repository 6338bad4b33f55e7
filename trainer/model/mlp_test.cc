// The whole model's gradient in double against finite differences, and the float path
// against the double one.
#include "model/mlp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "cpu/ops.h"

namespace trainer {
namespace {

using L = MlpLayout;

TEST(Mlp, LayoutIsOneBuffer) {
  EXPECT_EQ(L::kCount, 784u * 128 + 128 + 128 * 10 + 10);
  EXPECT_EQ(L::kCount, 101770u);
}

TEST(Mlp, InitIsGlorotUniformWithZeroBiases) {
  std::vector<float> p(L::kCount), q(L::kCount);
  InitParams(p.data(), 1);
  InitParams(q.data(), 1);
  EXPECT_EQ(p, q);
  const double lim1 = std::sqrt(6.0 / (784 + 128)), lim2 = std::sqrt(6.0 / (128 + 10));
  double sum = 0;
  for (size_t i = L::kW1; i < L::kB1; ++i) {
    ASSERT_LE(std::fabs(p[i]), lim1);
    sum += p[i];
  }
  EXPECT_NEAR(sum / (784 * 128), 0.0, 0.002);
  for (size_t i = L::kW2; i < L::kB2; ++i) ASSERT_LE(std::fabs(p[i]), lim2);
  for (size_t i = L::kB1; i < L::kW2; ++i) ASSERT_EQ(p[i], 0.0f);
  for (size_t i = L::kB2; i < L::kCount; ++i) ASSERT_EQ(p[i], 0.0f);
  InitParams(q.data(), 2);
  EXPECT_NE(p, q);
}

struct Fixture {
  static constexpr int n = 4;
  std::vector<double> params, x;
  std::vector<uint8_t> y = {1, 7, 0, 9};
  std::vector<float> mask = std::vector<float>(n * L::kHidden);
  Fixture() {
    std::vector<float> p(L::kCount);
    InitParams(p.data(), 3);
    params.assign(p.begin(), p.end());
    std::mt19937 rng(9);
    std::uniform_real_distribution<double> u(0, 1), b(-0.1, 0.1);
    for (size_t i = L::kB1; i < L::kW2; ++i) params[i] = b(rng);  // nonzero biases exercise db
    for (size_t i = L::kB2; i < L::kCount; ++i) params[i] = b(rng);
    x.resize(n * L::kIn);
    for (auto& v : x) v = u(rng);
    cpu::dropout_mask(mask.data(), n, L::kHidden, kDropoutRate, 5, 0, 0, 0);
  }
};

TEST(Mlp, GradientMatchesFiniteDifferences) {
  Fixture f;
  MlpWorkspace<double> ws(f.n);
  std::vector<double> grad(L::kCount), scratch(L::kCount);
  const double scale = 1.0 / 64;
  ShardGradient(f.params.data(), f.x.data(), f.y.data(), f.n, f.mask.data(), scale, grad.data(), ws);
  auto loss = [&] {
    return scale *
           ShardGradient(f.params.data(), f.x.data(), f.y.data(), f.n, f.mask.data(), scale, scratch.data(), ws);
  };
  // A spread of parameters from every block (checking all 101,770 would take minutes).
  std::vector<size_t> picks;
  for (size_t i = 0; i < L::kCount; i += 331) picks.push_back(i);
  for (size_t i = L::kB1; i < L::kB1 + 8; ++i) picks.push_back(i);
  for (size_t i = L::kB2; i < L::kCount; ++i) picks.push_back(i);
  const double h = 1e-6;
  int nonzero = 0;
  for (size_t i : picks) {
    double keep = f.params[i];
    f.params[i] = keep + h;
    double up = loss();
    f.params[i] = keep - h;
    double down = loss();
    f.params[i] = keep;
    double numeric = (up - down) / (2 * h);
    nonzero += grad[i] != 0;
    EXPECT_NEAR(grad[i], numeric, 1e-9 + 1e-5 * std::fabs(numeric)) << "param " << i;
  }
  EXPECT_GT(nonzero, static_cast<int>(picks.size()) / 3);
}

TEST(Mlp, FloatPathMatchesDouble) {
  Fixture f;
  std::vector<float> pf(f.params.begin(), f.params.end()), xf(f.x.begin(), f.x.end()), gf(L::kCount);
  std::vector<double> gd(L::kCount);
  MlpWorkspace<float> wsf(f.n);
  MlpWorkspace<double> wsd(f.n);
  double lf = ShardGradient(pf.data(), xf.data(), f.y.data(), f.n, f.mask.data(), 1.0, gf.data(), wsf);
  double ld = ShardGradient(f.params.data(), f.x.data(), f.y.data(), f.n, f.mask.data(), 1.0, gd.data(), wsd);
  EXPECT_NEAR(lf, ld, 1e-4 * std::fabs(ld));
  double max_abs = 0, max_err = 0;
  for (size_t i = 0; i < L::kCount; ++i) {
    max_abs = std::max(max_abs, std::fabs(gd[i]));
    max_err = std::max(max_err, std::fabs(gf[i] - gd[i]));
  }
  EXPECT_LT(max_err, 1e-4 * max_abs);
}

}  // namespace
}  // namespace trainer
