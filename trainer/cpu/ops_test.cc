// Every op's gradient against central finite differences in double precision, plus the
// determinism contract: the blocked fast paths give the bits of the documented loop.
#include "cpu/ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <tuple>
#include <vector>

namespace trainer::cpu {
namespace {

std::vector<double> Random(size_t n, std::mt19937& rng, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// Checks d(loss)/d(x[i]) == analytic[i] for every i, perturbing x in place.
void CheckGradient(const char* what, std::vector<double>& x, const std::vector<double>& analytic,
                   const std::function<double()>& loss) {
  ASSERT_EQ(x.size(), analytic.size());
  const double h = 1e-6;
  for (size_t i = 0; i < x.size(); ++i) {
    double keep = x[i];
    x[i] = keep + h;
    double up = loss();
    x[i] = keep - h;
    double down = loss();
    x[i] = keep;
    double numeric = (up - down) / (2 * h);
    EXPECT_NEAR(analytic[i], numeric, 1e-7 + 1e-6 * std::fabs(numeric)) << what << "[" << i << "]";
  }
}

double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

TEST(OpsGradient, Linear) {
  std::mt19937 rng(1);
  // (8, 5) x (5, 16): the blocked forward; backward's blocked rows plus one plain row.
  // (3, 7) x (7, 10): the plain loops only.
  for (auto shape : {std::tuple{8, 5, 16}, std::tuple{3, 7, 10}}) {
    // Variables, not structured bindings: clang 14 cannot capture bindings in the lambdas.
    const int N = std::get<0>(shape), I = std::get<1>(shape), O = std::get<2>(shape);
    auto in = Random(N * I, rng), w = Random(I * O, rng), b = Random(O, rng), r = Random(N * O, rng);
    std::vector<double> out(N * O), din(N * I), dw(I * O), db(O);
    auto loss = [&] {
      linear_forward(out.data(), in.data(), w.data(), b.data(), N, I, O);
      return Dot(out, r);  // L = sum(r * out), so dL/dout = r
    };
    loss();
    linear_backward(din.data(), dw.data(), db.data(), r.data(), in.data(), w.data(), N, I, O);
    CheckGradient("linear din", in, din, loss);
    CheckGradient("linear dw", w, dw, loss);
    CheckGradient("linear db", b, db, loss);
  }
}

TEST(OpsGradient, Relu) {
  std::mt19937 rng(2);
  auto in = Random(64, rng);
  for (auto& x : in) x += x > 0 ? 0.01 : -0.01;  // keep away from the kink
  auto r = Random(64, rng);
  std::vector<double> out(64), din(64);
  auto loss = [&] {
    relu_forward(out.data(), in.data(), 64);
    return Dot(out, r);
  };
  loss();
  relu_backward(din.data(), r.data(), out.data(), 64);
  CheckGradient("relu", in, din, loss);
}

TEST(OpsGradient, Dropout) {
  std::mt19937 rng(3);
  std::vector<float> mask(4 * 32);
  dropout_mask(mask.data(), 4, 32, 0.2f, 7, 0, 0, 0);
  auto in = Random(mask.size(), rng), r = Random(mask.size(), rng);
  std::vector<double> out(mask.size()), din(mask.size());
  int n = static_cast<int>(mask.size());
  auto loss = [&] {
    dropout_forward(out.data(), in.data(), mask.data(), n);
    return Dot(out, r);
  };
  loss();
  dropout_backward(din.data(), r.data(), mask.data(), n);
  CheckGradient("dropout", in, din, loss);
}

TEST(OpsGradient, SoftmaxCrossEntropy) {
  std::mt19937 rng(4);
  const int N = 6, C = 10;
  auto logits = Random(N * C, rng, -5, 5);
  std::vector<uint8_t> labels = {0, 3, 9, 9, 5, 1};
  std::vector<double> dlogits(N * C);
  auto loss = [&] {
    std::vector<double> scratch(N * C);
    return softmax_xent(scratch.data(), logits.data(), labels.data(), N, C, 1.0);
  };
  softmax_xent(dlogits.data(), logits.data(), labels.data(), N, C, 1.0);
  CheckGradient("softmax_xent", logits, dlogits, loss);
}

TEST(OpsGradient, SoftmaxLossValue) {
  double logits[3] = {1000, 0, -1000};  // stable for huge logits
  double d[3];
  uint8_t label = 1;
  EXPECT_NEAR(softmax_xent(d, logits, &label, 1, 3, 1.0), 1000.0, 1e-9);
}

TEST(Ops, DetExpMatchesLibm) {
  for (double x = -700; x < 700; x += 0.37) {
    EXPECT_NEAR(det_exp(x) / std::exp(x), 1.0, 2e-15) << x;
  }
  EXPECT_EQ(det_exp(0), 1.0);
  EXPECT_EQ(det_exp(-800), 0.0);
}

// The blocked kernels must produce the bits of the plain documented loop.
TEST(OpsDeterminism, BlockedEqualsDocumentedOrder) {
  std::mt19937 rng(5);
  const int N = 8, I = 784, O = 128;
  std::vector<float> in(N * I), w(I * O), b(O), dout(N * O);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto* v : {&in, &w, &b, &dout}) {
    for (auto& x : *v) x = u(rng);
  }
  std::vector<float> out(N * O), dw(I * O), db(O);
  linear_forward(out.data(), in.data(), w.data(), b.data(), N, I, O);
  linear_backward(nullptr, dw.data(), db.data(), dout.data(), in.data(), w.data(), N, I, O);
  for (int n = 0; n < N; ++n) {
    for (int o = 0; o < O; ++o) {
      float acc = 0;
      for (int i = 0; i < I; ++i) acc += in[n * I + i] * w[i * O + o];
      ASSERT_EQ(out[n * O + o], acc + b[o]) << n << "," << o;
    }
  }
  for (int i = 0; i < I; ++i) {
    for (int o = 0; o < O; ++o) {
      float acc = 0;
      for (int n = 0; n < N; ++n) acc += in[n * I + i] * dout[n * O + o];
      ASSERT_EQ(dw[i * O + o], acc) << i << "," << o;
    }
  }
}

TEST(Ops, DropoutMaskDependsOnSampleNotRow) {
  const int C = 128;
  std::vector<float> a(8 * C), b(4 * C);
  dropout_mask(a.data(), 8, C, 0.2f, 42, 3, 17, 0);
  dropout_mask(b.data(), 4, C, 0.2f, 42, 3, 17, 4);  // samples 4..7
  for (int i = 0; i < 4 * C; ++i) ASSERT_EQ(a[4 * C + i], b[i]);
  std::vector<float> big(1000 * C);
  dropout_mask(big.data(), 1000, C, 0.2f, 1, 0, 0, 0);
  int kept = 0;
  for (float m : big) {
    ASSERT_TRUE(m == 0.0f || m == 1.25f) << m;
    kept += m != 0.0f;
  }
  EXPECT_NEAR(kept / double(big.size()), 0.8, 0.01);
}

TEST(Ops, AdamFollowsKerasFormula) {
  const int n = 5;
  std::vector<float> p = {1, -2, 0.5f, 3, 0}, g = {0.1f, -0.2f, 3, -0.05f, 0}, m(n), v(n);
  AdamConfig c;
  std::vector<float> p0 = p;
  adam_update(p.data(), g.data(), m.data(), v.data(), n, c, 1);
  for (int i = 0; i < n; ++i) {
    double sign = g[i] > 0 ? 1 : (g[i] < 0 ? -1 : 0);
    EXPECT_NEAR(p[i], p0[i] - 1e-3 * sign, 1e-6) << i;  // the first step is about lr * sign(g)
  }
  // A second step against a double evaluation of the same formula.
  std::vector<double> md(m.begin(), m.end()), vd(v.begin(), v.end()), pd(p.begin(), p.end());
  adam_update(p.data(), g.data(), m.data(), v.data(), n, c, 2);
  double alpha = 1e-3 * std::sqrt(1 - 0.999 * 0.999) / (1 - 0.9 * 0.9);
  for (int i = 0; i < n; ++i) {
    md[i] += (g[i] - md[i]) * 0.1;
    vd[i] += (double(g[i]) * g[i] - vd[i]) * 0.001;
    pd[i] -= md[i] * alpha / (std::sqrt(vd[i]) + 1e-7);
    EXPECT_NEAR(p[i], pd[i], 1e-6) << i;
  }
}

}  // namespace
}  // namespace trainer::cpu
