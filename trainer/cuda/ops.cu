// The GPU ops: cuBLAS for the matrix products, cuDNN for ReLU, and one small kernel for
// each other op. The small kernels perform the CPU reference's IEEE operations in its
// order (this file is built with --fmad=false, so nvcc never fuses a*b+c into an FMA), and
// each reduction is summed by one thread in the reference's order: no atomics, so the
// same inputs give the same bits on every run.
#include "cuda/ops.h"

#include <cuda_runtime.h>

#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "core/philox.h"
#include "cuda/cuda_check.h"

namespace trainer::cuda {
// A named namespace where an anonymous one would do: nvcc names an anonymous namespace
// after a hash of the source file's absolute path (_GLOBAL__N__<hash>_6_ops_cu_...), so
// the plugin's bytes would depend on where the repository was cloned (issue 19).
namespace ops_detail {

constexpr int kThreads = 256;
constexpr size_t kBlasWorkspace = size_t{32} << 20;  // cuBLAS's recommendation for Hopper

// Blocks for n elements, one per thread; the kernels loop with a grid stride, so a cap is
// only a matter of speed.
unsigned Grid(size_t n) {
  size_t b = (n + kThreads - 1) / kThreads;
  if (b == 0) b = 1;
  return static_cast<unsigned>(b < 65536 ? b : 65536);
}

bool PowerOfTwo(int v) { return v > 0 && (v & (v - 1)) == 0; }

__device__ __forceinline__ size_t ThreadIndex() { return blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; }
__device__ __forceinline__ size_t GridStride() { return static_cast<size_t>(gridDim.x) * blockDim.x; }

__global__ void BroadcastRowsKernel(float* out, const float* b, size_t total, int O) {
  for (size_t i = ThreadIndex(); i < total; i += GridStride()) out[i] = b[i % static_cast<size_t>(O)];
}

// db_g (O) = sum over rows n of dout_g (N, O), from +0 in row order, for each group g:
// db_g at db + g * db_stride, dout_g at dout + g * dout_stride. One thread per output.
__global__ void BiasGradKernel(float* db, size_t db_stride, const float* dout, size_t dout_stride, int groups, int N,
                               int O) {
  const size_t total = static_cast<size_t>(groups) * O;
  for (size_t i = ThreadIndex(); i < total; i += GridStride()) {
    const size_t g = i / O, o = i % O;
    const float* d = dout + g * dout_stride + o;
    float acc = 0.0f;
    for (int n = 0; n < N; ++n) acc += d[static_cast<size_t>(n) * O];
    db[g * db_stride + o] = acc;
  }
}

// out (n) = the pairwise tree over `count` blocks (a power of two), as TreeSum adds:
// a stack holds one partial sum per completed level; after block s, as many merges as s
// has trailing one bits, each earlier + later.
__global__ void TreeSumKernel(float* out, const float* blocks, int count, size_t stride, size_t n) {
  for (size_t i = ThreadIndex(); i < n; i += GridStride()) {
    float stack[32];
    int depth = 0;
    for (int s = 0; s < count; ++s) {
      float v = blocks[static_cast<size_t>(s) * stride + i];
      for (int t = s; (t & 1) != 0; t >>= 1) v = stack[--depth] + v;
      stack[depth++] = v;
    }
    out[i] = stack[0];
  }
}

__global__ void DropoutMaskKernel(float* mask, int N, int C, float rate, float keep_scale, PhiloxKey key, int epoch,
                                  int step, const int32_t* epoch_step, int first_sample) {
  if (epoch_step != nullptr) {
    epoch = epoch_step[0];
    step = epoch_step[1];
  }
  const int groups = (C + 3) / 4;  // one Philox call per 4 columns, as the reference
  const size_t total = static_cast<size_t>(N) * groups;
  for (size_t t = ThreadIndex(); t < total; t += GridStride()) {
    const int r = static_cast<int>(t / groups), c0 = static_cast<int>(t % groups) * 4;
    PhiloxCounter ctr = {StreamWord(RngStream::kDropout, static_cast<uint32_t>(c0 / 4)), static_cast<uint32_t>(epoch),
                         static_cast<uint32_t>(step), static_cast<uint32_t>(first_sample + r)};
    PhiloxCounter bits = Philox4x32(ctr, key);
    for (int k = 0; k < 4 && c0 + k < C; ++k) {
      mask[static_cast<size_t>(r) * C + c0 + k] = UniformFloat(bits[k]) < rate ? 0.0f : keep_scale;
    }
  }
}

__global__ void MultiplyKernel(float* out, const float* in, const float* mask, size_t n) {
  for (size_t i = ThreadIndex(); i < n; i += GridStride()) out[i] = in[i] * mask[i];
}

// 1 / n!, exact products then one IEEE division: the constants of the reference.
constexpr double InvFactorial(int n) {
  double f = 1;
  for (int k = 2; k <= n; ++k) f *= k;
  return 1.0 / f;
}

// 1/0! ... 1/13!, evaluated by the compiler (DetExp then multiplies and adds immediates,
// rather than computing factorials in every thread).
constexpr std::array<double, 14> InvFactorials() {
  std::array<double, 14> t{};
  for (int n = 0; n < 14; ++n) t[static_cast<size_t>(n)] = InvFactorial(n);
  return t;
}

// cpu::det_exp, operation for operation.
__device__ double DetExp(double x) {
  if (x < -745.0) return 0.0;
  if (x > 709.0) return __longlong_as_double(0x7ff0000000000000LL);  // +inf, as HUGE_VAL
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kLog2e = 1.44269504088896338700e+00;
  double k = nearbyint(x * kLog2e);
  double r = (x - k * kLn2Hi) - k * kLn2Lo;
  constexpr std::array<double, 14> kInv = InvFactorials();  // a local: device code sees it
  double p = kInv[13];
#pragma unroll
  for (int n = 12; n >= 0; --n) p = p * r + kInv[static_cast<size_t>(n)];
  return ldexp(p, static_cast<int>(k));
}

// cpu::softmax_xent over `groups` blocks of N rows, one block of threads per group; each
// row by one thread, in double as the reference (exp recomputed in the second pass rather
// than stored: det_exp gives the same bits both times). The group's loss is summed by
// thread 0 in row order, from 0, as the reference's loop.
__global__ void SoftmaxXentKernel(float* dlogits, const float* logits, const uint8_t* labels, int N, int C,
                                  double scale, double* loss_sum, float* loss_f, size_t loss_stride) {
  extern __shared__ double row_loss[];  // (N)
  const size_t g = blockIdx.x;
  for (int r = threadIdx.x; r < N; r += blockDim.x) {
    const size_t row = g * N + r;
    const float* z = logits + row * C;  // (C)
    float* dz = dlogits + row * C;      // (C)
    double zmax = z[0];
    for (int c = 1; c < C; ++c) zmax = z[c] > zmax ? z[c] : zmax;
    double sum = 0;
    for (int c = 0; c < C; ++c) sum += DetExp(static_cast<double>(z[c]) - zmax);
    const int label = labels[row];
    for (int c = 0; c < C; ++c) {
      double p = DetExp(static_cast<double>(z[c]) - zmax) / sum;
      dz[c] = static_cast<float>((p - (c == label ? 1.0 : 0.0)) * scale);
    }
    row_loss[r] = log(sum) - (static_cast<double>(z[label]) - zmax);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    double loss = 0;
    for (int r = 0; r < N; ++r) loss += row_loss[r];
    if (loss_sum != nullptr) loss_sum[g] = loss;
    if (loss_f != nullptr) loss_f[g * loss_stride] = static_cast<float>(loss);
  }
}

__global__ void AdamKernel(float* p, const float* g, float* m, float* v, int n, float alpha, const float* alpha_dev,
                           float one_minus_b1, float one_minus_b2, float epsilon) {
  if (alpha_dev != nullptr) alpha = *alpha_dev;
  for (size_t i = ThreadIndex(); i < static_cast<size_t>(n); i += GridStride()) {
    float mi = m[i], vi = v[i];
    const float gi = g[i];
    mi += (gi - mi) * one_minus_b1;
    vi += (gi * gi - vi) * one_minus_b2;
    m[i] = mi;
    v[i] = vi;
    p[i] -= mi * alpha / (sqrtf(vi) + epsilon);
  }
}

__global__ void AddKernel(float* dst, const float* src, size_t n) {
  for (size_t i = ThreadIndex(); i < n; i += GridStride()) dst[i] += src[i];
}

__global__ void GatherBatchKernel(float* x, uint8_t* y, const float* images, const uint8_t* labels, const int32_t* idx,
                                  int B, int I) {
  const size_t total = static_cast<size_t>(B) * I;
  for (size_t e = ThreadIndex(); e < total; e += GridStride()) {
    const size_t j = e / I, c = e % I;
    const size_t ex = static_cast<size_t>(idx[j]);
    x[e] = images[ex * I + c];
    if (c == 0) y[j] = labels[ex];
  }
}

// Groups of GEMMs: for each g, dw_g (I, O) = in_g^T @ dout_g with in_g (N, I) rows of
// `in_ld` floats. cuBLAS is column-major: row-major dw (I, O) is column-major (O, I), so
// dw^T = dout^T (O, N) @ in (N, I), with in read transposed.
Status WeightGradGroups(Context& ctx, float* dw, long long dw_stride, const float* in, int in_ld, long long in_stride,
                        const float* dout, long long dout_stride, int groups, int N, int I, int O) {
  const float one = 1.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasSgemmStridedBatched(ctx.blas(), CUBLAS_OP_N, CUBLAS_OP_T, O, I, N, &one, dout, O, dout_stride, in,
                                         in_ld, in_stride, &zero, dw, O, dw_stride, groups));
  return Status::Ok();
}

Status CheckCount(const char* op, int n) {
  return n > 0 ? Status::Ok() : MakeError(ErrorKind::kInvalidInput, std::string(op) + ": n must be positive");
}

}  // namespace ops_detail
using namespace ops_detail;

// --- What this build can run on ---

cudaError_t ProbeKernelImage() {
  cudaFuncAttributes a{};
  return cudaFuncGetAttributes(&a, AddKernel);
}

int BuiltSm() {
  // nvcc's list of the architectures this file is compiled for (e.g. 800,900), in every pass.
  constexpr int kArchs[] = {__CUDA_ARCH_LIST__};
  int lowest = kArchs[0];
  for (int a : kArchs) lowest = a < lowest ? a : lowest;
  return lowest / 10;
}

// --- Context ---

Result<std::unique_ptr<Context>> Context::Create(int device) {
  std::unique_ptr<Context> c(new Context());
  c->device_ = device;
  CUDA_CHECK(cudaSetDevice(device));
  CUDA_CHECK(cudaStreamCreateWithFlags(&c->stream_, cudaStreamNonBlocking));
  CUBLAS_CHECK(cublasCreate(&c->blas_));
  CUBLAS_CHECK(cublasSetStream(c->blas_, c->stream_));
  CUBLAS_CHECK(cublasSetMathMode(c->blas_, CUBLAS_PEDANTIC_MATH));  // fp32 throughout: no TF32
  CUBLAS_CHECK(cublasSetAtomicsMode(c->blas_, CUBLAS_ATOMICS_NOT_ALLOWED));
  CUBLAS_CHECK(cublasSetPointerMode(c->blas_, CUBLAS_POINTER_MODE_HOST));
  CUDA_CHECK(cudaMalloc(&c->blas_workspace_, kBlasWorkspace));
  CUBLAS_CHECK(cublasSetWorkspace(c->blas_, c->blas_workspace_, kBlasWorkspace));
  CUDNN_CHECK(cudnnCreate(&c->dnn_));
  CUDNN_CHECK(cudnnSetStream(c->dnn_, c->stream_));
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&c->vector_desc_));
  CUDNN_CHECK(cudnnCreateActivationDescriptor(&c->relu_desc_));
  CUDNN_CHECK(cudnnSetActivationDescriptor(c->relu_desc_, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
  return Result<std::unique_ptr<Context>>(std::move(c));
}

Context::~Context() {
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  if (relu_desc_ != nullptr) cudnnDestroyActivationDescriptor(relu_desc_);
  if (vector_desc_ != nullptr) cudnnDestroyTensorDescriptor(vector_desc_);
  if (dnn_ != nullptr) cudnnDestroy(dnn_);
  if (blas_ != nullptr) cublasDestroy(blas_);
  if (blas_workspace_ != nullptr) cudaFree(blas_workspace_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

// --- The ops ---

Status broadcast_rows(Context& ctx, float* out, const float* b, int N, int O) {
  const size_t total = static_cast<size_t>(N) * O;
  if (total == 0) return Status::Ok();
  BroadcastRowsKernel<<<Grid(total), kThreads, 0, ctx.stream()>>>(out, b, total, O);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

Status linear_forward(Context& ctx, float* out, const float* in, const float* w, const float* b, int N, int I, int O) {
  // out = b broadcast, then out (column-major (O, N)) = w^T-as-stored (O, I) @ in (I, N) + out:
  // cuBLAS adds the bias to the finished dot product, as the reference does.
  TRAINER_TRY(broadcast_rows(ctx, out, b, N, O));
  const float one = 1.0f;
  CUBLAS_CHECK(cublasSgemm(ctx.blas(), CUBLAS_OP_N, CUBLAS_OP_N, O, N, I, &one, w, O, in, I, &one, out, O));
  return Status::Ok();
}

Status linear_backward(Context& ctx, float* din, float* dw, float* db, const float* dout, const float* in,
                       const float* w, int N, int I, int O) {
  TRAINER_TRY(WeightGradGroups(ctx, dw, 0, in, I, 0, dout, 0, 1, N, I, O));
  TRAINER_TRY(bias_grad(ctx, db, dout, N, O));
  if (din == nullptr) return Status::Ok();
  return linear_backward_input(ctx, din, dout, w, N, I, O);
}

Status linear_backward_input(Context& ctx, float* din, const float* dout, const float* w, int N, int I, int O) {
  // din (column-major (I, N)) = w (column-major (O, I), transposed) @ dout (column-major (O, N)).
  const float one = 1.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasSgemm(ctx.blas(), CUBLAS_OP_T, CUBLAS_OP_N, I, N, O, &one, w, O, dout, O, &zero, din, I));
  return Status::Ok();
}

Status bias_grad(Context& ctx, float* db, const float* dout, int N, int O) {
  return bias_grad_groups(ctx, db, 0, dout, 0, 1, N, O);
}

Status bias_grad_groups(Context& ctx, float* db, size_t db_stride, const float* dout, size_t dout_stride, int groups,
                        int N, int O) {
  const size_t total = static_cast<size_t>(groups) * O;
  if (total == 0) return Status::Ok();
  BiasGradKernel<<<Grid(total), kThreads, 0, ctx.stream()>>>(db, db_stride, dout, dout_stride, groups, N, O);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

Status linear_weight_grad_groups(Context& ctx, float* dw, size_t dw_stride, const float* in, int in_ld,
                                 size_t in_stride, const float* dout, size_t dout_stride, int groups, int N, int I,
                                 int O) {
  if (groups <= 0 || N <= 0 || I <= 0 || O <= 0 || in_ld < I) {
    return MakeError(ErrorKind::kInvalidInput, "linear_weight_grad_groups: bad shape");
  }
  return WeightGradGroups(ctx, dw, static_cast<long long>(dw_stride), in, in_ld, static_cast<long long>(in_stride),
                          dout, static_cast<long long>(dout_stride), groups, N, I, O);
}

Status linear_weight_grad_tree(Context& ctx, float* dw, const float* in, int I, const float* dout, size_t dout_stride,
                               int shards, int N, int i_begin, int i_end, int O, float* scratch) {
  if (!PowerOfTwo(shards)) return MakeError(ErrorKind::kInvalidInput, "linear_weight_grad_tree: shards must be 2^k");
  const int rows = i_end - i_begin;
  if (rows <= 0 || i_begin < 0 || i_end > I) {
    return MakeError(ErrorKind::kInvalidInput, "linear_weight_grad_tree: bad row range");
  }
  // scratch (shards, rows, O): shard s's rows of in_s^T @ dout_s, in_s's columns
  // [i_begin, i_end) read with its full row length I as the leading dimension.
  const size_t part = static_cast<size_t>(rows) * O;
  TRAINER_TRY(linear_weight_grad_groups(ctx, scratch, part, in + i_begin, I, static_cast<size_t>(N) * I, dout,
                                        dout_stride, shards, N, rows, O));
  return tree_sum(ctx, dw, scratch, shards, part, part);
}

Status relu_forward(Context& ctx, float* out, const float* in, int n) {
  TRAINER_TRY(CheckCount("relu_forward", n));
  const float one = 1.0f, zero = 0.0f;
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(ctx.vector_desc(), CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, n, 1, 1));
  CUDNN_CHECK(
      cudnnActivationForward(ctx.dnn(), ctx.relu_desc(), &one, ctx.vector_desc(), in, &zero, ctx.vector_desc(), out));
  return Status::Ok();
}

Status relu_backward(Context& ctx, float* din, const float* dout, const float* out, int n) {
  TRAINER_TRY(CheckCount("relu_backward", n));
  const float one = 1.0f, zero = 0.0f;
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(ctx.vector_desc(), CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, n, 1, 1));
  // cuDNN wants x (the input) too; for ReLU, out > 0 exactly where x > 0, so out serves.
  const cudnnTensorDescriptor_t d = ctx.vector_desc();
  CUDNN_CHECK(cudnnActivationBackward(ctx.dnn(), ctx.relu_desc(), &one, d, out, d, dout, d, out, &zero, d, din));
  return Status::Ok();
}

namespace ops_detail {
Status DropoutMask(Context& ctx, float* mask, int N, int C, float rate, uint64_t seed, int epoch, int step,
                   const int32_t* epoch_step, int first_sample) {
  const size_t total = static_cast<size_t>(N) * ((C + 3) / 4);
  if (total == 0) return Status::Ok();
  const float keep_scale = 1.0f / (1.0f - rate);  // as cpu::dropout_mask, on the host
  DropoutMaskKernel<<<Grid(total), kThreads, 0, ctx.stream()>>>(mask, N, C, rate, keep_scale, KeyFromSeed(seed), epoch,
                                                                step, epoch_step, first_sample);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}
}  // namespace ops_detail
using namespace ops_detail;

Status dropout_mask(Context& ctx, float* mask, int N, int C, float rate, uint64_t seed, int epoch, int step,
                    int first_sample) {
  return DropoutMask(ctx, mask, N, C, rate, seed, epoch, step, nullptr, first_sample);
}

Status dropout_mask(Context& ctx, float* mask, int N, int C, float rate, uint64_t seed, const int32_t* epoch_step,
                    int first_sample) {
  return DropoutMask(ctx, mask, N, C, rate, seed, 0, 0, epoch_step, first_sample);
}

Status dropout_forward(Context& ctx, float* out, const float* in, const float* mask, int n) {
  if (n <= 0) return Status::Ok();
  MultiplyKernel<<<Grid(static_cast<size_t>(n)), kThreads, 0, ctx.stream()>>>(out, in, mask, static_cast<size_t>(n));
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

Status dropout_backward(Context& ctx, float* din, const float* dout, const float* mask, int n) {
  return dropout_forward(ctx, din, dout, mask, n);  // the same product
}

namespace ops_detail {
constexpr int kSoftmaxThreads = 128;
constexpr int kSoftmaxMaxRows = 48 * 1024 / static_cast<int>(sizeof(double));  // per-row losses in shared memory

Status SoftmaxXent(Context& ctx, float* dlogits, const float* logits, const uint8_t* labels, int groups, int N, int C,
                   double scale, double* loss_sum, float* loss_f, size_t loss_stride) {
  if (groups <= 0 || N <= 0) return Status::Ok();
  if (N > kSoftmaxMaxRows || C < 1 || C > 256) {
    return MakeError(ErrorKind::kInvalidInput,
                     "softmax_xent: at most " + std::to_string(kSoftmaxMaxRows) + " rows per group and 1..256 classes");
  }
  SoftmaxXentKernel<<<static_cast<unsigned>(groups), kSoftmaxThreads, static_cast<size_t>(N) * sizeof(double),
                      ctx.stream()>>>(dlogits, logits, labels, N, C, scale, loss_sum, loss_f, loss_stride);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}
}  // namespace ops_detail
using namespace ops_detail;

Status softmax_xent(Context& ctx, float* dlogits, const float* logits, const uint8_t* labels, int N, int C,
                    double scale, double* loss) {
  return SoftmaxXent(ctx, dlogits, logits, labels, 1, N, C, scale, loss, nullptr, 0);
}

Status softmax_xent_groups(Context& ctx, float* dlogits, const float* logits, const uint8_t* labels, int groups, int N,
                           int C, double scale, float* loss, size_t loss_stride) {
  return SoftmaxXent(ctx, dlogits, logits, labels, groups, N, C, scale, nullptr, loss, loss_stride);
}

namespace ops_detail {
Status Adam(Context& ctx, float* p, const float* g, float* m, float* v, int n, const cpu::AdamConfig& c, float alpha,
            const float* alpha_dev) {
  if (n <= 0) return Status::Ok();
  // The same float constants as cpu::adam_update, computed on the host.
  const float one_minus_b1 = 1.0f - c.beta1, one_minus_b2 = 1.0f - c.beta2;
  AdamKernel<<<Grid(static_cast<size_t>(n)), kThreads, 0, ctx.stream()>>>(p, g, m, v, n, alpha, alpha_dev, one_minus_b1,
                                                                          one_minus_b2, c.epsilon);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}
}  // namespace ops_detail
using namespace ops_detail;

Status adam_update(Context& ctx, float* p, const float* g, float* m, float* v, int n, const cpu::AdamConfig& c,
                   int64_t t) {
  return Adam(ctx, p, g, m, v, n, c, cpu::adam_alpha(c, t), nullptr);
}

Status adam_update(Context& ctx, float* p, const float* g, float* m, float* v, int n, const cpu::AdamConfig& c,
                   const float* alpha) {
  return Adam(ctx, p, g, m, v, n, c, 0.0f, alpha);
}

Status add_inplace(Context& ctx, float* dst, const float* src, size_t n) {
  if (n == 0) return Status::Ok();
  AddKernel<<<Grid(n), kThreads, 0, ctx.stream()>>>(dst, src, n);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

Status tree_sum(Context& ctx, float* out, const float* blocks, int count, size_t stride, size_t n) {
  if (!PowerOfTwo(count)) return MakeError(ErrorKind::kInvalidInput, "tree_sum: count must be a power of two");
  if (n == 0) return Status::Ok();
  TreeSumKernel<<<Grid(n), kThreads, 0, ctx.stream()>>>(out, blocks, count, stride, n);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

Status gather_batch(Context& ctx, float* x, uint8_t* y, const float* images, const uint8_t* labels, const int32_t* idx,
                    int B, int I) {
  const size_t total = static_cast<size_t>(B) * I;
  if (total == 0) return Status::Ok();
  GatherBatchKernel<<<Grid(total), kThreads, 0, ctx.stream()>>>(x, y, images, labels, idx, B, I);
  CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

}  // namespace trainer::cuda
