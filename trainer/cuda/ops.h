// The CPU reference ops (cpu/ops.h) on the GPU: the same names, shapes and row-major
// layouts, on device pointers, fp32 (double where the reference uses double). Every op
// enqueues its work on the Context's one stream and returns at once; a Status error here
// is a bad launch, a fault inside a kernel surfaces at the next synchronizing call.
//
// How each op runs, and how close it is to the reference:
//   linear_forward, linear_backward     cuBLAS SGEMM (pedantic fp32: no TF32; atomics not
//   linear_weight_grad_tree             allowed; a fixed workspace), so a fixed kernel and
//                                       summation order per shape, but not the reference's
//                                       order: these agree to rounding (ops_cuda_test)
//   relu_forward, relu_backward         cuDNN activation (RELU)                   same bits
//   bias_grad, dropout_*, softmax_xent, small kernels doing the reference's        same bits
//   adam_update, add_inplace, tree_sum  IEEE operations in its order (built with
//                                       --fmad=false: no contraction into FMA)
// Reductions never use atomics: each output is summed by one thread in a fixed order.
//
// Not here: the data-parallel step (cuda/step_cuda.h) and collectives (cuda/nccl_comm.h).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/result.h"
#include "cpu/ops.h"

namespace trainer::cuda {

// Whether this device has an image of the kernels below (cudaFuncGetAttributes on one of
// them, on the current device): cudaErrorNoKernelImageForDevice when the build targets
// other GPUs. ProbeDevice asks before any op runs.
cudaError_t ProbeKernelImage();
// The lowest architecture the kernels were built for: 90 for sm_90 (CMAKE_CUDA_ARCHITECTURES).
int BuiltSm();

// The handles every op uses, bound to one stream of one device: a cuBLAS handle in
// pedantic fp32 math with atomics disallowed and its own 32 MiB workspace (so cuBLAS never
// allocates during a CUDA graph capture), and a cuDNN handle.
class Context {
 public:
  static Result<std::unique_ptr<Context>> Create(int device);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t blas() const { return blas_; }
  cudnnHandle_t dnn() const { return dnn_; }
  cudnnTensorDescriptor_t vector_desc() const { return vector_desc_; }  // reset per cuDNN call
  cudnnActivationDescriptor_t relu_desc() const { return relu_desc_; }

 private:
  Context() = default;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  cudnnHandle_t dnn_ = nullptr;
  void* blas_workspace_ = nullptr;
  cudnnTensorDescriptor_t vector_desc_ = nullptr;
  cudnnActivationDescriptor_t relu_desc_ = nullptr;
};

// out (N, O) = in (N, I) @ w (I, O) + b (O)
Status linear_forward(Context& ctx, float* out, const float* in, const float* w, const float* b, int N, int I, int O);

// dw (I, O) = in^T @ dout, db (O) = sum over rows of dout (N, O); din (N, I) = dout @ w^T
// when din is not null.
Status linear_backward(Context& ctx, float* din, float* dw, float* db, const float* dout, const float* in,
                       const float* w, int N, int I, int O);

// din (N, I) = dout (N, O) @ w^T: linear_backward's input gradient alone.
Status linear_backward_input(Context& ctx, float* din, const float* dout, const float* w, int N, int I, int O);

// db (O) = sum over rows of dout (N, O), in row order from +0.
Status bias_grad(Context& ctx, float* db, const float* dout, int N, int O);

// Per group g of `groups`: db_g (O) = bias_grad of dout_g (N, O), with db_g at
// db + g * db_stride and dout_g at dout + g * dout_stride (one launch for all shards).
Status bias_grad_groups(Context& ctx, float* db, size_t db_stride, const float* dout, size_t dout_stride, int groups,
                        int N, int O);

// Per group g: dw_g (I, O) = in_g^T @ dout_g (linear_backward's dw), one cuBLAS batched
// GEMM. in_g (N, I) starts at in + g * in_stride, its rows in_ld >= I floats apart (so a
// column range of a wider matrix works); dout_g (N, O) at dout + g * dout_stride; dw_g at
// dw + g * dw_stride.
Status linear_weight_grad_groups(Context& ctx, float* dw, size_t dw_stride, const float* in, int in_ld,
                                 size_t in_stride, const float* dout, size_t dout_stride, int groups, int N, int I,
                                 int O);

// The shard-tree weight gradient of cpu::linear_weight_grad_tree, rows [i_begin, i_end):
//   dw (i_end - i_begin, O) = tree over s of in_s^T @ dout_s, restricted to those rows,
// where in_s (N, I) is rows [s*N, (s+1)*N) of `in` (contiguous rows of I floats: the GPU
// gathers a batch's rows where the CPU points at them) and dout_s (N, O) starts at
// dout + s * dout_stride. `scratch` holds shards * (i_end - i_begin) * O floats (the
// per-shard products, then summed by tree_sum). shards must be a power of two.
Status linear_weight_grad_tree(Context& ctx, float* dw, const float* in, int I, const float* dout, size_t dout_stride,
                               int shards, int N, int i_begin, int i_end, int O, float* scratch);

// out (n) = max(in, 0)
Status relu_forward(Context& ctx, float* out, const float* in, int n);

// din (n) = dout where out > 0, else 0. din may alias dout.
Status relu_backward(Context& ctx, float* din, const float* dout, const float* out, int n);

// mask (N, C): cpu::dropout_mask's bits (the same Philox counters).
Status dropout_mask(Context& ctx, float* mask, int N, int C, float rate, uint64_t seed, int epoch, int step,
                    int first_sample);
// The same, with (epoch, step) read on the device from epoch_step[0], epoch_step[1] when the
// kernel runs: what a captured CUDA graph replays with new values each step.
Status dropout_mask(Context& ctx, float* mask, int N, int C, float rate, uint64_t seed, const int32_t* epoch_step,
                    int first_sample);

// out (n) = in * mask; din (n) = dout * mask (din may alias dout).
Status dropout_forward(Context& ctx, float* out, const float* in, const float* mask, int n);
Status dropout_backward(Context& ctx, float* din, const float* dout, const float* mask, int n);

// cpu::softmax_xent on logits (N, C), labels (N): writes dlogits (N, C) and, when loss is
// not null, the loss sum (the reference's return value) to *loss on the device.
Status softmax_xent(Context& ctx, float* dlogits, const float* logits, const uint8_t* labels, int N, int C,
                    double scale, double* loss);
// The same over `groups` consecutive groups of N rows (the shards of a step): group g's
// loss sum, rounded to float, goes to loss[g * loss_stride] (the CPU step's shard slot).
Status softmax_xent_groups(Context& ctx, float* dlogits, const float* logits, const uint8_t* labels, int groups, int N,
                           int C, double scale, float* loss, size_t loss_stride);

// cpu::adam_update; alpha = cpu::adam_alpha(c, t), computed on the host.
Status adam_update(Context& ctx, float* p, const float* g, float* m, float* v, int n, const cpu::AdamConfig& c,
                   int64_t t);
// The same with alpha read on the device from *alpha when the kernel runs (CUDA graphs).
Status adam_update(Context& ctx, float* p, const float* g, float* m, float* v, int n, const cpu::AdamConfig& c,
                   const float* alpha);

// dst[i] += src[i]
Status add_inplace(Context& ctx, float* dst, const float* src, size_t n);

// out (n) = the pairwise tree over `count` blocks of n floats laid out `stride` apart, the
// additions of trainer::TreeSum (train/step.h). count must be a power of two.
Status tree_sum(Context& ctx, float* out, const float* blocks, int count, size_t stride, size_t n);

// Row-major broadcast: out (N, O) row n = b (O). linear_forward's first half.
Status broadcast_rows(Context& ctx, float* out, const float* b, int N, int O);

// x (B, I) row j = images[idx[j]], y (B) = labels[idx[j]]: a batch from the device copy of
// the training set, idx (B) on the device.
Status gather_batch(Context& ctx, float* x, uint8_t* y, const float* images, const uint8_t* labels, const int32_t* idx,
                    int B, int I);

}  // namespace trainer::cuda
