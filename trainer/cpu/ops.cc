// The CPU reference ops. The two big matrix products (layer 1 forward and its weight
// gradient, plain or summed over shards) are register-blocked; each output still
// accumulates in the documented order, so the blocked and plain paths give identical bits
// (ops_test and step_test check that).
#include "cpu/ops.h"

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "core/philox.h"

namespace trainer::cpu {
namespace {

// Register tiles: kTileRows rows x two vectors of 32 bytes (16 floats). GCC's vector
// extension makes the compiler keep the tile in registers; each lane still runs the
// scalar loop of its output (same operations, same order), so the bits do not change.
constexpr int kTileRows = 4;

template <typename T>
struct Vec {
  typedef T type __attribute__((vector_size(32)));
  static constexpr int kLanes = 32 / sizeof(T);
  static type Load(const T* p) {
    type v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  }
  static void Store(T* p, type v) { std::memcpy(p, &v, sizeof(v)); }
};

// out[n0 .. n0+4, o0 .. o0+2*lanes) of linear_forward.
template <typename T>
inline void ForwardTile(T* out, const T* in, const T* w, const T* b, int n0, int o0, int I, int O) {
  using V = Vec<T>;
  typename V::type acc[kTileRows][2] = {};
  for (int i = 0; i < I; ++i) {
    const T* wr = w + static_cast<size_t>(i) * O + o0;
    typename V::type w0 = V::Load(wr), w1 = V::Load(wr + V::kLanes);
    for (int r = 0; r < kTileRows; ++r) {
      T x = in[static_cast<size_t>(n0 + r) * I + i];
      acc[r][0] += x * w0;
      acc[r][1] += x * w1;
    }
  }
  typename V::type b0 = V::Load(b + o0), b1 = V::Load(b + o0 + V::kLanes);
  for (int r = 0; r < kTileRows; ++r) {
    V::Store(out + static_cast<size_t>(n0 + r) * O + o0, acc[r][0] + b0);
    V::Store(out + static_cast<size_t>(n0 + r) * O + o0 + V::kLanes, acc[r][1] + b1);
  }
}

// dw[i0 .. i0+4, o0 .. o0+2*lanes) of linear_backward.
template <typename T>
inline void WeightGradTile(T* dw, const T* dout, const T* in, int i0, int o0, int N, int I, int O) {
  using V = Vec<T>;
  typename V::type acc[kTileRows][2] = {};
  for (int n = 0; n < N; ++n) {
    const T* dr = dout + static_cast<size_t>(n) * O + o0;
    typename V::type d0 = V::Load(dr), d1 = V::Load(dr + V::kLanes);
    for (int r = 0; r < kTileRows; ++r) {
      T x = in[static_cast<size_t>(n) * I + i0 + r];
      acc[r][0] += x * d0;
      acc[r][1] += x * d1;
    }
  }
  for (int r = 0; r < kTileRows; ++r) {
    V::Store(dw + static_cast<size_t>(i0 + r) * O + o0, acc[r][0]);
    V::Store(dw + static_cast<size_t>(i0 + r) * O + o0 + V::kLanes, acc[r][1]);
  }
}

// Deep enough for 2^31 shards: the stack holds at most one partial sum per tree level.
constexpr int kMaxTreeDepth = 32;

// The pairwise tree over shards 0, 1, 2, ... as a stack: after shard s, the partial sums
// of the levels completed by s + 1 merge, earlier + later (as TreeSum adds). Those are as
// many as s has trailing one bits. Returns how many to pop.
inline int TreeMerges(int s) { return std::countr_one(static_cast<unsigned>(s)); }

// GCC cannot see that the tree stacks below are only read where already written (a pop
// follows a push); zeroing them would cost more than the tiles. (Clang has no such
// warning, and -Werror refuses an unknown one.)
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// dw rows [i0, i0 + Rows), columns [o0, o0 + 2*lanes) of linear_weight_grad_tree. Each
// shard's tile accumulates as WeightGradTile does, then joins the tree. `dw` points at
// row i0's output row. Always inlined: a call would leave the AVX2 clone for baseline code.
template <typename T, int Rows>
__attribute__((always_inline)) inline void WeightGradTreeTile(T* dw, const T* const* in, const T* dout,
                                                              size_t dout_stride, int S, int N, int i0, int o0, int O) {
  using V = Vec<T>;
  struct Tile {
    typename V::type v[Rows][2];
  };
  Tile stack[kMaxTreeDepth];
  int depth = 0;
  for (int s = 0; s < S; ++s) {
    Tile acc = {};
    const T* d = dout + static_cast<size_t>(s) * dout_stride;  // (N, O)
    const T* const* x = in + static_cast<size_t>(s) * N;       // N rows of I
    for (int n = 0; n < N; ++n) {
      const T* dr = d + static_cast<size_t>(n) * O + o0;
      typename V::type d0 = V::Load(dr), d1 = V::Load(dr + V::kLanes);
      for (int r = 0; r < Rows; ++r) {
        T xv = x[n][i0 + r];
        acc.v[r][0] += xv * d0;
        acc.v[r][1] += xv * d1;
      }
    }
    for (int m = TreeMerges(s); m > 0; --m) {
      --depth;
      for (int r = 0; r < Rows; ++r) {
        acc.v[r][0] = stack[depth].v[r][0] + acc.v[r][0];
        acc.v[r][1] = stack[depth].v[r][1] + acc.v[r][1];
      }
    }
    stack[depth++] = acc;
  }
  for (int r = 0; r < Rows; ++r) {
    V::Store(dw + static_cast<size_t>(r) * O + o0, stack[0].v[r][0]);
    V::Store(dw + static_cast<size_t>(r) * O + o0 + V::kLanes, stack[0].v[r][1]);
  }
}

template <typename T>
__attribute__((always_inline)) inline void LinearWeightGradTree(T* dw, const T* const* in, const T* dout,
                                                                size_t dout_stride, int S, int N, int i_begin,
                                                                int i_end, int O) {
  int i = i_begin;
  const int tile_cols = 2 * Vec<T>::kLanes;
  auto row = [&](int ii) { return dw + static_cast<size_t>(ii - i_begin) * O; };
  if (O % tile_cols == 0) {
    for (; i + kTileRows <= i_end; i += kTileRows) {
      for (int o0 = 0; o0 < O; o0 += tile_cols) {
        WeightGradTreeTile<T, kTileRows>(row(i), in, dout, dout_stride, S, N, i, o0, O);
      }
    }
    for (; i < i_end; ++i) {  // a slice that does not end on a whole tile
      for (int o0 = 0; o0 < O; o0 += tile_cols) WeightGradTreeTile<T, 1>(row(i), in, dout, dout_stride, S, N, i, o0, O);
    }
  }
  for (; i < i_end; ++i) {  // the plain loop, one output at a time (narrow layers)
    for (int o = 0; o < O; ++o) {
      T stack[kMaxTreeDepth];
      int depth = 0;
      for (int s = 0; s < S; ++s) {
        T acc = 0;
        const T* d = dout + static_cast<size_t>(s) * dout_stride;
        for (int n = 0; n < N; ++n) acc += in[static_cast<size_t>(s) * N + n][i] * d[static_cast<size_t>(n) * O + o];
        for (int m = TreeMerges(s); m > 0; --m) acc = stack[--depth] + acc;
        stack[depth++] = acc;
      }
      row(i)[o] = stack[0];
    }
  }
}

#pragma GCC diagnostic pop

template <typename T>
inline void BiasGrad(T* db, const T* dout, int N, int O) {
  for (int o = 0; o < O; ++o) db[o] = 0;
  for (int n = 0; n < N; ++n) {
    for (int o = 0; o < O; ++o) db[o] += dout[static_cast<size_t>(n) * O + o];
  }
}

template <typename T>
inline void LinearForward(T* out, const T* in, const T* w, const T* b, int N, int I, int O) {
  int n = 0;
  const int tile_cols = 2 * Vec<T>::kLanes;
  if (O % tile_cols == 0) {
    for (; n + kTileRows <= N; n += kTileRows) {
      for (int o0 = 0; o0 < O; o0 += tile_cols) ForwardTile(out, in, w, b, n, o0, I, O);
    }
  }
  for (; n < N; ++n) {  // the plain loop: leftover rows, and narrow layers
    T* row = out + static_cast<size_t>(n) * O;
    for (int o = 0; o < O; ++o) row[o] = 0;
    for (int i = 0; i < I; ++i) {
      T x = in[static_cast<size_t>(n) * I + i];
      const T* wr = w + static_cast<size_t>(i) * O;
      for (int o = 0; o < O; ++o) row[o] += x * wr[o];
    }
    for (int o = 0; o < O; ++o) row[o] += b[o];
  }
}

template <typename T>
inline void LinearBackward(T* din, T* dw, T* db, const T* dout, const T* in, const T* w, int N, int I, int O) {
  int i = 0;
  const int tile_cols = 2 * Vec<T>::kLanes;
  if (O % tile_cols == 0) {
    for (; i + kTileRows <= I; i += kTileRows) {
      for (int o0 = 0; o0 < O; o0 += tile_cols) WeightGradTile(dw, dout, in, i, o0, N, I, O);
    }
  }
  for (; i < I; ++i) {  // the plain loop
    T* row = dw + static_cast<size_t>(i) * O;
    for (int o = 0; o < O; ++o) row[o] = 0;
    for (int n = 0; n < N; ++n) {
      T x = in[static_cast<size_t>(n) * I + i];
      const T* dr = dout + static_cast<size_t>(n) * O;
      for (int o = 0; o < O; ++o) row[o] += x * dr[o];
    }
  }
  BiasGrad(db, dout, N, O);
  if (din == nullptr) return;
  for (int n = 0; n < N; ++n) {
    for (int k = 0; k < I; ++k) {
      T acc = 0;
      for (int o = 0; o < O; ++o) acc += dout[static_cast<size_t>(n) * O + o] * w[static_cast<size_t>(k) * O + o];
      din[static_cast<size_t>(n) * I + k] = acc;
    }
  }
}

// The float versions are compiled twice (AVX2 and baseline) and picked at load time.
// With contraction off, both run the same IEEE operations per output: same bits.
// x86-64 only: "avx2" is no target elsewhere, and aarch64's baseline already has NEON
// (the 32-byte vectors become two 16-byte ones, lane for lane the same operations).
// Not under ThreadSanitizer: the ifunc resolver runs while the loader relocates, before
// the TSan runtime has a thread state, and its instrumented entry then crashes every
// binary that links the trainer (SIGSEGV before main).
#if !defined(__x86_64__) || defined(__SANITIZE_THREAD__)
#define TRAINER_CLONES
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TRAINER_CLONES
#endif
#endif
#ifndef TRAINER_CLONES
#define TRAINER_CLONES __attribute__((target_clones("avx2", "default")))
#endif

TRAINER_CLONES void LinearForwardF32(float* out, const float* in, const float* w, const float* b, int N, int I, int O) {
  LinearForward(out, in, w, b, N, I, O);
}

TRAINER_CLONES void LinearBackwardF32(float* din, float* dw, float* db, const float* dout, const float* in,
                                      const float* w, int N, int I, int O) {
  LinearBackward(din, dw, db, dout, in, w, N, I, O);
}

TRAINER_CLONES void LinearWeightGradTreeF32(float* dw, const float* const* in, const float* dout, size_t dout_stride,
                                            int S, int N, int i_begin, int i_end, int O) {
  LinearWeightGradTree(dw, in, dout, dout_stride, S, N, i_begin, i_end, O);
}

TRAINER_CLONES void AdamUpdateF32(float* p, const float* g, float* m, float* v, int n, float alpha, float one_minus_b1,
                                  float one_minus_b2, float epsilon) {
  for (int i = 0; i < n; ++i) {
    m[i] += (g[i] - m[i]) * one_minus_b1;
    v[i] += (g[i] * g[i] - v[i]) * one_minus_b2;
    p[i] -= m[i] * alpha / (std::sqrt(v[i]) + epsilon);
  }
}

TRAINER_CLONES void AddInplaceF32(float* dst, const float* src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] += src[i];
}

template <typename T>
void ReluForward(T* out, const T* in, int n) {
  for (int i = 0; i < n; ++i) out[i] = in[i] > 0 ? in[i] : T(0);
}

template <typename T>
void ReluBackward(T* din, const T* dout, const T* out, int n) {
  for (int i = 0; i < n; ++i) din[i] = out[i] > 0 ? dout[i] : T(0);
}

template <typename T>
void DropoutApply(T* out, const T* in, const float* mask, int n) {
  for (int i = 0; i < n; ++i) out[i] = in[i] * static_cast<T>(mask[i]);
}

// 1 / n! for the exp polynomial, computed by the compiler from exact integers.
constexpr double InvFactorial(int n) {
  double f = 1;
  for (int k = 2; k <= n; ++k) f *= k;
  return 1.0 / f;
}

template <typename T>
double SoftmaxXent(T* dlogits, const T* logits, const uint8_t* labels, int N, int C, double scale) {
  double loss = 0;
  for (int n = 0; n < N; ++n) {
    const T* z = logits + static_cast<size_t>(n) * C;  // (C)
    T* dz = dlogits + static_cast<size_t>(n) * C;      // (C)
    double zmax = z[0];
    for (int c = 1; c < C; ++c) zmax = z[c] > zmax ? z[c] : zmax;
    double e[256];
    double sum = 0;
    for (int c = 0; c < C; ++c) {
      e[c] = det_exp(static_cast<double>(z[c]) - zmax);
      sum += e[c];
    }
    for (int c = 0; c < C; ++c) {
      double p = e[c] / sum;
      dz[c] = static_cast<T>((p - (c == labels[n] ? 1.0 : 0.0)) * scale);
    }
    // libm's log, unlike exp above: it feeds only the reported loss, never dz.
    loss += std::log(sum) - (static_cast<double>(z[labels[n]]) - zmax);
  }
  return loss;
}

}  // namespace

void linear_forward(float* out, const float* in, const float* w, const float* b, int N, int I, int O) {
  LinearForwardF32(out, in, w, b, N, I, O);
}
void linear_forward(double* out, const double* in, const double* w, const double* b, int N, int I, int O) {
  LinearForward(out, in, w, b, N, I, O);
}
void linear_backward(float* din, float* dw, float* db, const float* dout, const float* in, const float* w, int N, int I,
                     int O) {
  LinearBackwardF32(din, dw, db, dout, in, w, N, I, O);
}
void linear_backward(double* din, double* dw, double* db, const double* dout, const double* in, const double* w, int N,
                     int I, int O) {
  LinearBackward(din, dw, db, dout, in, w, N, I, O);
}
void bias_grad(float* db, const float* dout, int N, int O) { BiasGrad(db, dout, N, O); }
void bias_grad(double* db, const double* dout, int N, int O) { BiasGrad(db, dout, N, O); }
void linear_weight_grad_tree(float* dw, const float* const* in_rows, const float* dout, size_t dout_stride, int shards,
                             int N, int i_begin, int i_end, int O) {
  LinearWeightGradTreeF32(dw, in_rows, dout, dout_stride, shards, N, i_begin, i_end, O);
}
void linear_weight_grad_tree(double* dw, const double* const* in_rows, const double* dout, size_t dout_stride,
                             int shards, int N, int i_begin, int i_end, int O) {
  LinearWeightGradTree(dw, in_rows, dout, dout_stride, shards, N, i_begin, i_end, O);
}
void relu_forward(float* out, const float* in, int n) { ReluForward(out, in, n); }
void relu_forward(double* out, const double* in, int n) { ReluForward(out, in, n); }
void relu_backward(float* din, const float* dout, const float* out, int n) { ReluBackward(din, dout, out, n); }
void relu_backward(double* din, const double* dout, const double* out, int n) { ReluBackward(din, dout, out, n); }
void dropout_forward(float* out, const float* in, const float* mask, int n) { DropoutApply(out, in, mask, n); }
void dropout_forward(double* out, const double* in, const float* mask, int n) { DropoutApply(out, in, mask, n); }
void dropout_backward(float* din, const float* dout, const float* mask, int n) { DropoutApply(din, dout, mask, n); }
void dropout_backward(double* din, const double* dout, const float* mask, int n) { DropoutApply(din, dout, mask, n); }
double softmax_xent(float* dlogits, const float* logits, const uint8_t* labels, int N, int C, double scale) {
  return SoftmaxXent(dlogits, logits, labels, N, C, scale);
}
double softmax_xent(double* dlogits, const double* logits, const uint8_t* labels, int N, int C, double scale) {
  return SoftmaxXent(dlogits, logits, labels, N, C, scale);
}

void dropout_mask(float* mask, int N, int C, float rate, uint64_t seed, int epoch, int step, int first_sample) {
  const PhiloxKey key = KeyFromSeed(seed);
  const float keep_scale = 1.0f / (1.0f - rate);
  for (int r = 0; r < N; ++r) {
    for (int c0 = 0; c0 < C; c0 += 4) {
      PhiloxCounter ctr = {StreamWord(RngStream::kDropout, static_cast<uint32_t>(c0 / 4)), static_cast<uint32_t>(epoch),
                           static_cast<uint32_t>(step), static_cast<uint32_t>(first_sample + r)};
      PhiloxCounter bits = Philox4x32(ctr, key);
      for (int k = 0; k < 4 && c0 + k < C; ++k) {
        mask[static_cast<size_t>(r) * C + c0 + k] = UniformFloat(bits[k]) < rate ? 0.0f : keep_scale;
      }
    }
  }
}

double det_exp(double x) {
  if (x < -745.0) return 0.0;
  if (x > 709.0) return HUGE_VAL;
  // x = k ln2 + r with |r| <= ln2 / 2; ln2 split in two so k * ln2_hi is exact.
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kLog2e = 1.44269504088896338700e+00;
  double k = std::nearbyint(x * kLog2e);
  double r = (x - k * kLn2Hi) - k * kLn2Lo;
  // Taylor series to r^13 / 13!, Horner form: truncation error < 1e-17 relative.
  double p = InvFactorial(13);
  for (int n = 12; n >= 0; --n) p = p * r + InvFactorial(n);
  return std::ldexp(p, static_cast<int>(k));
}

void adam_update(float* p, const float* g, float* m, float* v, int n, const AdamConfig& c, int64_t t) {
  const float alpha = adam_alpha(c, t);
  const float one_minus_b1 = 1.0f - c.beta1, one_minus_b2 = 1.0f - c.beta2;
  AdamUpdateF32(p, g, m, v, n, alpha, one_minus_b1, one_minus_b2, c.epsilon);
}

void add_inplace(float* dst, const float* src, size_t n) { AddInplaceF32(dst, src, n); }

}  // namespace trainer::cpu
