// The CPU reference of every op the trainer runs. Plain loops over row-major arrays, one
// function per op, shapes in the comments. A later CUDA backend implements the same names
// and shapes and is checked against these.
//
// Determinism contract (what a faster or GPU version must reproduce bit for bit):
//   - every dot product sums in increasing index order starting from +0, then adds the
//     bias; no fused multiply-add (the build uses -ffp-contract=off);
//   - exp is det_exp (basic IEEE operations only), never libm, whose results vary by CPU;
//   - no op reads state other than its arguments.
// Vectorizing across independent outputs keeps those orders, so SSE and AVX builds agree.
//
// Each op has a float overload (training) and a double one (gradient checks); both run
// the same template, so the double check covers the float code path.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace trainer::cpu {

// out (N, O) = in (N, I) @ w (I, O) + b (O)
void linear_forward(float* out, const float* in, const float* w, const float* b, int N, int I, int O);
void linear_forward(double* out, const double* in, const double* w, const double* b, int N, int I, int O);

// Overwrites dw (I, O) = in^T @ dout and db (O) = sum over rows of dout (N, O);
// din (N, I) = dout @ w^T when din is not null.
void linear_backward(float* din, float* dw, float* db, const float* dout, const float* in, const float* w, int N, int I,
                     int O);
void linear_backward(double* din, double* dw, double* db, const double* dout, const double* in, const double* w, int N,
                     int I, int O);

// db (O) = sum over rows of dout (N, O), in row order from +0 (linear_backward's db).
void bias_grad(float* db, const float* dout, int N, int O);
void bias_grad(double* db, const double* dout, int N, int O);

// The weight gradient of `shards` shards of N rows each, summed over the shards by the
// pairwise tree of train/step.h, for the input rows [i_begin, i_end) only:
//   dw (i_end - i_begin, O) = tree over s of in_s^T @ dout_s, restricted to those rows,
// where in_s (N, I) row n is in_rows[s*N + n] (a pointer to I values; only columns
// [i_begin, i_end) are read) and dout_s (N, O) starts at dout + s * dout_stride. Each
// shard's element accumulates exactly as linear_backward's dw, so the result has the bits
// of linear_backward per shard followed by TreeSum, without the S full-size blocks: the
// tree runs on register tiles. shards must be a power of two.
void linear_weight_grad_tree(float* dw, const float* const* in_rows, const float* dout, size_t dout_stride, int shards,
                             int N, int i_begin, int i_end, int O);
void linear_weight_grad_tree(double* dw, const double* const* in_rows, const double* dout, size_t dout_stride,
                             int shards, int N, int i_begin, int i_end, int O);

// out (n) = max(in, 0)
void relu_forward(float* out, const float* in, int n);
void relu_forward(double* out, const double* in, int n);

// din (n) = dout where out > 0, else 0. din may alias dout.
void relu_backward(float* din, const float* dout, const float* out, int n);
void relu_backward(double* din, const double* dout, const double* out, int n);

// mask (N, C) = 0 with probability `rate`, else 1 / (1 - rate) (inverted dropout, as
// Keras). Bits come from Philox keyed by `seed`, counter (epoch, step, sample, column/4),
// where sample = first_sample + row is the position in the global batch.
void dropout_mask(float* mask, int N, int C, float rate, uint64_t seed, int epoch, int step, int first_sample);

// out (n) = in * mask
void dropout_forward(float* out, const float* in, const float* mask, int n);
void dropout_forward(double* out, const double* in, const float* mask, int n);

// din (n) = dout * mask. din may alias dout.
void dropout_backward(float* din, const float* dout, const float* mask, int n);
void dropout_backward(double* din, const double* dout, const float* mask, int n);

// Sparse softmax cross-entropy from logits (N, C) with labels (N).
// dlogits (N, C) = (softmax(logits) - onehot(label)) * scale; returns the sum over rows
// of -log softmax[label] (in double; it is reported, never fed back).
// C <= 256.
double softmax_xent(float* dlogits, const float* logits, const uint8_t* labels, int N, int C, double scale);
double softmax_xent(double* dlogits, const double* logits, const uint8_t* labels, int N, int C, double scale);

// exp(x) from IEEE basic operations only (range reduction + polynomial), so every CPU
// gives the same bits. Relative error below 1e-15.
double det_exp(double x);

struct AdamConfig {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-7f;
};

// Adam's step size for step t >= 1: lr * sqrt(1 - beta2^t) / (1 - beta1^t), in double with
// beta^t by repeated squaring (basic operations only, so identical everywhere), rounded
// once to float. adam_update uses it; the CUDA backend computes it here on the host too
// and hands it to its kernel.
inline float adam_alpha(const AdamConfig& c, int64_t t) {
  double b1t = 1, b2t = 1, b1 = c.beta1, b2 = c.beta2;
  for (int64_t e = t; e > 0; e >>= 1) {
    if (e & 1) {
      b1t *= b1;
      b2t *= b2;
    }
    b1 *= b1;
    b2 *= b2;
  }
  return static_cast<float>(c.lr * std::sqrt(1.0 - b2t) / (1.0 - b1t));
}

// Keras's Adam, step t >= 1 (1-based), on n parameters:
//   alpha = adam_alpha(c, t) = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
//   m += (g - m) * (1 - beta1);  v += (g*g - v) * (1 - beta2)
//   p -= m * alpha / (sqrt(v) + epsilon)
void adam_update(float* p, const float* g, float* m, float* v, int n, const AdamConfig& c, int64_t t);

// dst[i] += src[i] for i in [0, n): one IEEE add per element, the same bits on every path.
void add_inplace(float* dst, const float* src, size_t n);

}  // namespace trainer::cpu
