#include "model/mlp.h"

#include <cmath>

#include "core/philox.h"
#include "cpu/ops.h"

namespace trainer {
namespace {

using L = MlpLayout;

// Everything but dW1: dh1 (n, 128) and the gradients of b1, W2, b2 into rest (the
// buffer's layout from kB1). dh1 may be ws.h1 (the pre-activation is dead by then).
template <typename T>
double ExceptW1Impl(const T* params, const T* x, const uint8_t* y, int n, const float* mask, double scale, T* dh1,
                    T* rest, MlpWorkspace<T>& ws) {
  const T* w1 = params + L::kW1;  // (784, 128)
  const T* b1 = params + L::kB1;  // (128)
  const T* w2 = params + L::kW2;  // (128, 10)
  const T* b2 = params + L::kB2;  // (10)
  const int hn = n * L::kHidden;

  // Forward.
  cpu::linear_forward(ws.h1.data(), x, w1, b1, n, L::kIn, L::kHidden);  // h1 (n, 128)
  cpu::relu_forward(ws.a1.data(), ws.h1.data(), hn);                    // a1 (n, 128)
  const T* d1 = ws.a1.data();
  if (mask != nullptr) {
    cpu::dropout_forward(ws.d1.data(), ws.a1.data(), mask, hn);  // d1 (n, 128)
    d1 = ws.d1.data();
  }
  cpu::linear_forward(ws.logits.data(), d1, w2, b2, n, L::kHidden, L::kOut);                   // logits (n, 10)
  double loss = cpu::softmax_xent(ws.dlogits.data(), ws.logits.data(), y, n, L::kOut, scale);  // dlogits (n, 10)

  // Backward.
  T* db1 = rest;                      // (128)
  T* dw2 = rest + (L::kW2 - L::kB1);  // (128, 10)
  T* db2 = rest + (L::kB2 - L::kB1);  // (10)
  cpu::linear_backward(ws.dd1.data(), dw2, db2, ws.dlogits.data(), d1, w2, n, L::kHidden,
                       L::kOut);  // dd1 (n, 128), dW2 (128, 10), db2 (10)
  if (mask != nullptr) cpu::dropout_backward(ws.dd1.data(), ws.dd1.data(), mask, hn);  // da1 (n, 128)
  cpu::relu_backward(dh1, ws.dd1.data(), ws.a1.data(), hn);                            // dh1 (n, 128)
  cpu::bias_grad(db1, dh1, n, L::kHidden);                                             // db1 (128)
  return loss;
}

template <typename T>
double ShardGradientImpl(const T* params, const T* x, const uint8_t* y, int n, const float* mask, double scale, T* grad,
                         MlpWorkspace<T>& ws) {
  double loss = ExceptW1Impl(params, x, y, n, mask, scale, ws.h1.data(), grad + L::kB1, ws);
  cpu::linear_backward(static_cast<T*>(nullptr), grad + L::kW1, grad + L::kB1, ws.h1.data(), x, params + L::kW1, n,
                       L::kIn, L::kHidden);  // dW1 (784, 128), db1 (128) again, same bits; no dx
  return loss;
}

}  // namespace

template <typename T>
MlpWorkspace<T>::MlpWorkspace(int rows_)
    : rows(rows_),
      h1(static_cast<size_t>(rows_) * L::kHidden),
      a1(h1.size()),
      d1(h1.size()),
      logits(static_cast<size_t>(rows_) * L::kOut),
      dlogits(logits.size()),
      dd1(h1.size()) {}

template struct MlpWorkspace<float>;
template struct MlpWorkspace<double>;

void InitParams(float* params, uint64_t seed) {
  const PhiloxKey key = KeyFromSeed(seed);
  auto glorot = [&](size_t offset, int fan_in, int fan_out) {
    const double limit = std::sqrt(6.0 / (fan_in + fan_out));
    const size_t count = static_cast<size_t>(fan_in) * fan_out;
    for (size_t i = 0; i < count; i += 4) {
      PhiloxCounter ctr = {StreamWord(RngStream::kInit, 0), static_cast<uint32_t>(offset), static_cast<uint32_t>(i / 4),
                           0};
      PhiloxCounter bits = Philox4x32(ctr, key);
      for (size_t k = 0; k < 4 && i + k < count; ++k) {
        params[offset + i + k] = static_cast<float>((2.0 * UniformFloat(bits[k]) - 1.0) * limit);
      }
    }
  };
  glorot(L::kW1, L::kIn, L::kHidden);
  for (int i = 0; i < L::kHidden; ++i) params[L::kB1 + i] = 0.0f;
  glorot(L::kW2, L::kHidden, L::kOut);
  for (int i = 0; i < L::kOut; ++i) params[L::kB2 + i] = 0.0f;
}

double ShardGradient(const float* params, const float* x, const uint8_t* y, int n, const float* mask, double scale,
                     float* grad, MlpWorkspace<float>& ws) {
  return ShardGradientImpl(params, x, y, n, mask, scale, grad, ws);
}

double ShardGradient(const double* params, const double* x, const uint8_t* y, int n, const float* mask, double scale,
                     double* grad, MlpWorkspace<double>& ws) {
  return ShardGradientImpl(params, x, y, n, mask, scale, grad, ws);
}

double ShardGradientExceptW1(const float* params, const float* x, const uint8_t* y, int n, const float* mask,
                             double scale, float* dh1, float* rest_grad, MlpWorkspace<float>& ws) {
  return ExceptW1Impl(params, x, y, n, mask, scale, dh1, rest_grad, ws);
}

void Predict(const float* params, const float* x, int n, float* logits, MlpWorkspace<float>& ws) {
  cpu::linear_forward(ws.h1.data(), x, params + L::kW1, params + L::kB1, n, L::kIn, L::kHidden);        // (n, 128)
  cpu::relu_forward(ws.a1.data(), ws.h1.data(), n * L::kHidden);                                        // (n, 128)
  cpu::linear_forward(logits, ws.a1.data(), params + L::kW2, params + L::kB2, n, L::kHidden, L::kOut);  // (n, 10)
}

}  // namespace trainer
