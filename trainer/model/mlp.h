// The model, exactly the Keras example: Dense(784 -> 128, relu) -> Dropout(0.2) ->
// Dense(128 -> 10) logits, sparse softmax cross-entropy. All parameters live in one
// contiguous buffer (the layout below), so a gradient is one buffer too and the digest
// of the weights is the sha256 of that buffer.
//
// This file computes one shard's gradient on the CPU reference ops; it does not know
// about workers, shards' order or the optimizer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace trainer {

// Offsets into the parameter buffer (in elements).
struct MlpLayout {
  static constexpr int kIn = 784, kHidden = 128, kOut = 10;
  static constexpr size_t kW1 = 0;                             // (784, 128) row-major [in][out]
  static constexpr size_t kB1 = kW1 + size_t{kIn} * kHidden;   // (128)
  static constexpr size_t kW2 = kB1 + kHidden;                 // (128, 10) row-major [in][out]
  static constexpr size_t kB2 = kW2 + size_t{kHidden} * kOut;  // (10)
  static constexpr size_t kCount = kB2 + kOut;                 // 101,770
};

constexpr float kDropoutRate = 0.2f;

// Glorot-uniform kernels (limit sqrt(6 / (fan_in + fan_out))), zero biases. The random
// bits are Philox keyed by the seed with the element's index as counter.
void InitParams(float* params, uint64_t seed);  // params (kCount)

// Scratch for one shard of up to `rows` examples.
template <typename T>
struct MlpWorkspace {
  explicit MlpWorkspace(int rows);
  int rows;
  std::vector<T> h1;       // (rows, 128) pre-activation, then reused for its gradient
  std::vector<T> a1;       // (rows, 128) relu output
  std::vector<T> d1;       // (rows, 128) after dropout
  std::vector<T> logits;   // (rows, 10)
  std::vector<T> dlogits;  // (rows, 10)
  std::vector<T> dd1;      // (rows, 128)
};

// Forward and backward over n examples x (n, 784) with labels y (n). `mask` (n, 128) is
// the dropout mask, or null for no dropout. Overwrites grad (kCount) with the gradient of
// scale * sum of the n losses; returns the sum of the n losses.
double ShardGradient(const float* params, const float* x, const uint8_t* y, int n, const float* mask, double scale,
                     float* grad, MlpWorkspace<float>& ws);
double ShardGradient(const double* params, const double* x, const uint8_t* y, int n, const float* mask, double scale,
                     double* grad, MlpWorkspace<double>& ws);

// The part of ShardGradient that does not need layer 1's weight gradient: writes dh1
// (n, 128), the gradient at layer 1's pre-activation output, and the gradient of the
// parameters from b1 on (b1, W2, b2: kCount - kB1 values, in the buffer's layout) into
// rest_grad. dW1 is then x^T @ dh1 (cpu::linear_backward or linear_weight_grad_tree),
// which lets data parallelism split dW1 by rows (train/step.h). Returns the loss sum.
double ShardGradientExceptW1(const float* params, const float* x, const uint8_t* y, int n, const float* mask,
                             double scale, float* dh1, float* rest_grad, MlpWorkspace<float>& ws);

// Inference (no dropout): logits (n, 10) for x (n, 784).
void Predict(const float* params, const float* x, int n, float* logits, MlpWorkspace<float>& ws);

}  // namespace trainer
