#include "cuda/step_cuda.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "cuda/collective_wait.h"
#include "cuda/cuda_check.h"
#include "model/mlp.h"

namespace trainer::cuda {
namespace {

using L = MlpLayout;
constexpr int kH = L::kHidden, kI = L::kIn, kO = L::kOut;
// Parameters from b1 on (b1, W2, b2), updated by every rank; the loss follows them.
constexpr size_t kRest = L::kCount - L::kB1;

}  // namespace

Result<std::unique_ptr<CudaStep>> CudaStep::Create(const Split& train, const StepShape& shape, uint64_t seed,
                                                   const cpu::AdamConfig& adam, Comm& host, int device,
                                                   CudaStepOptions options) {
  // The shape is Train's, already checked by ValidateStepShape (train/step.h): this
  // plugin links none of the trainer's libraries, only their headers.
  if (shape.shards <= 0 || shape.global_batch % shape.shards != 0 || shape.shards % host.size() != 0) {
    return MakeError(ErrorKind::kInvalidInput, "CudaStep: the step shape was not validated (ValidateStepShape)");
  }
  std::unique_ptr<CudaStep> s(new CudaStep());
  auto ctx = Context::Create(device);
  if (!ctx.ok()) return ctx.error();
  s->ctx_ = std::move(*ctx);
  s->shape_ = shape;
  s->seed_ = seed;
  s->adam_ = adam;
  s->options_ = options;
  s->rank_ = host.rank();
  s->world_ = host.size();
  s->n_ = shape.global_batch / shape.shards;
  s->local_shards_ = shape.shards / s->world_;
  s->first_shard_ = s->rank_ * s->local_shards_;
  s->local_rows_ = s->local_shards_ * s->n_;
  s->slice_rows_ = (kI + s->world_ - 1) / s->world_;
  const RowSlice rows = W1Rows(s->rank_, s->world_);
  s->row_begin_ = rows.begin;
  s->row_end_ = rows.end;
  s->rest_stride_ = (kRest + 1 + 15) / 16 * 16;
  if (s->world_ > 1) {
    auto nccl = NcclComm::Create(host, s->ctx_->stream());
    if (!nccl.ok()) return nccl.error().Context("starting NCCL");
    s->nccl_ = std::move(*nccl);
  }
  TRAINER_TRY(s->Allocate(train));
  return Result<std::unique_ptr<CudaStep>>(std::move(s));
}

RowSlice CudaStep::W1Rows(int rank, int world) {
  const int per = (kI + world - 1) / world;
  const int begin = std::min(rank * per, kI);
  return {begin, std::min(begin + per, kI)};
}

Status CudaStep::Allocate(const Split& train) {
  const int B = shape_.global_batch, S = shape_.shards;
  const size_t local_hidden = static_cast<size_t>(local_rows_) * kH;
  TRAINER_TRY(images_.Allocate(static_cast<size_t>(train.count) * kI));
  TRAINER_TRY(labels_.Allocate(static_cast<size_t>(train.count)));
  // Every copy and memset goes on the step's own stream (a non-blocking one, which does not
  // wait for the legacy default stream that plain cudaMemcpy / cudaMemset use).
  cudaStream_t stream = ctx_->stream();
  CUDA_CHECK(cudaMemcpyAsync(images_.get(), train.images.data(), images_.bytes(), cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(labels_.get(), train.labels.data(), labels_.bytes(), cudaMemcpyHostToDevice, stream));
  for (auto* a : {&params_, &m_, &v_}) TRAINER_TRY(a->Allocate(L::kCount));
  TRAINER_TRY(grad_.Allocate(L::kCount + 1));
  TRAINER_TRY(args_.Allocate(static_cast<size_t>(kArgIdx) + B));
  TRAINER_TRY(x_.Allocate(static_cast<size_t>(B) * kI));
  TRAINER_TRY(y_.Allocate(static_cast<size_t>(B)));
  for (auto* a : {&mask_, &h1_, &a1_, &d1_, &dd1_}) TRAINER_TRY(a->Allocate(local_hidden));
  TRAINER_TRY(logits_.Allocate(static_cast<size_t>(local_rows_) * kO));
  TRAINER_TRY(dlogits_.Allocate(static_cast<size_t>(local_rows_) * kO));
  TRAINER_TRY(dh1_.Allocate(static_cast<size_t>(B) * kH));
  TRAINER_TRY(rest_.Allocate(static_cast<size_t>(S) * rest_stride_));
  TRAINER_TRY(parts_.Allocate(static_cast<size_t>(S) * (row_end_ - row_begin_) * kH));
  if (world_ > 1 && world_ * slice_rows_ != kI) {
    TRAINER_TRY(w1_padded_.Allocate(static_cast<size_t>(world_) * slice_rows_ * kH));
  }
  // The gradient's W1 rows of other ranks are never written; zero them once so that the
  // buffer holds no garbage (nothing reads them).
  CUDA_CHECK(cudaMemsetAsync(grad_.get(), 0, grad_.bytes(), stream));

  // Pinned slots: (kArgIdx + B) words of arguments and one float of loss each.
  const size_t words = static_cast<size_t>(kArgIdx) + B + 1;
  CUDA_CHECK(cudaHostAlloc(&pinned_, kSlots * words * sizeof(int32_t), cudaHostAllocDefault));
  slots_.resize(kSlots);
  for (int k = 0; k < kSlots; ++k) {
    int32_t* base = static_cast<int32_t*>(pinned_) + k * words;
    slots_[static_cast<size_t>(k)].args = base;
    slots_[static_cast<size_t>(k)].loss = reinterpret_cast<float*>(base + kArgIdx + B);
    CUDA_CHECK(cudaEventCreateWithFlags(&slots_[static_cast<size_t>(k)].done, cudaEventDisableTiming));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return Status::Ok();
}

Status CudaStep::Wait(cudaEvent_t event, const char* what) {
  cudaStream_t stream = ctx_->stream();
  WaitHooks hooks;
  hooks.done = [event, stream]() -> Result<bool> {
    const cudaError_t e = event != nullptr ? cudaEventQuery(event) : cudaStreamQuery(stream);
    if (e == cudaErrorNotReady) return false;
    CUDA_CHECK(e);
    return true;
  };
  if (nccl_ == nullptr) return WaitWithDeadline(hooks, std::chrono::milliseconds::max(), what);
  hooks.comm_error = [this] { return nccl_->AsyncError(); };
  hooks.abort = [this] { nccl_->Abort(); };
  return WaitWithDeadline(hooks, options_.collective_timeout, what);
}

CudaStep::~CudaStep() {
  // Bounded: a peer gone mid-step must not hang the exit (the wait aborts NCCL).
  if (ctx_ != nullptr) (void)Wait(nullptr, "finishing the last steps");
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  if (graph_ != nullptr) cudaGraphDestroy(graph_);
  for (auto& s : slots_) {
    if (s.done != nullptr) cudaEventDestroy(s.done);
  }
  if (pinned_ != nullptr) cudaFreeHost(pinned_);
}

Status CudaStep::Enqueue() {
  Context& c = *ctx_;
  const int B = shape_.global_batch, S = shape_.shards, n = n_, Sl = local_shards_, Bl = local_rows_;
  const double scale = 1.0 / B;  // mean over the global batch
  const size_t RS = rest_stride_;
  float* p = params_.get();
  const float* w1 = p + L::kW1;  // (784, 128)
  const float* b1 = p + L::kB1;  // (128)
  const float* w2 = p + L::kW2;  // (128, 10)
  const float* b2 = p + L::kB2;  // (10)
  const int32_t* args = args_.get();
  const size_t first_row = static_cast<size_t>(first_shard_) * n;            // this rank's first row in the batch
  const float* x_local = x_.get() + first_row * kI;                          // (Bl, 784)
  const uint8_t* y_local = y_.get() + first_row;                             // (Bl)
  float* dh1_local = dh1_.get() + first_row * kH;                            // (Bl, 128)
  float* rest_local = rest_.get() + static_cast<size_t>(first_shard_) * RS;  // (Sl, RS)

  // 1. The global batch from the device copy of the training set; this rank's shards up
  //    to dh1 and the small gradients, every shard summed on its own (groups of n rows).
  TRAINER_TRY(gather_batch(c, x_.get(), y_.get(), images_.get(), labels_.get(), args + kArgIdx, B, kI));
  TRAINER_TRY(dropout_mask(c, mask_.get(), Bl, kH, kDropoutRate, seed_, args + kArgEpoch,
                           static_cast<int>(first_row)));                        // (Bl, 128)
  TRAINER_TRY(linear_forward(c, h1_.get(), x_local, w1, b1, Bl, kI, kH));        // h1 (Bl, 128)
  TRAINER_TRY(relu_forward(c, a1_.get(), h1_.get(), Bl * kH));                   // a1
  TRAINER_TRY(dropout_forward(c, d1_.get(), a1_.get(), mask_.get(), Bl * kH));   // d1
  TRAINER_TRY(linear_forward(c, logits_.get(), d1_.get(), w2, b2, Bl, kH, kO));  // logits (Bl, 10)
  TRAINER_TRY(softmax_xent_groups(c, dlogits_.get(), logits_.get(), y_local, Sl, n, kO, scale, rest_local + kRest,
                                  RS));  // dlogits (Bl, 10); each shard's loss sum into its slot
  TRAINER_TRY(linear_weight_grad_groups(c, rest_local + (L::kW2 - L::kB1), RS, d1_.get(), kH,
                                        static_cast<size_t>(n) * kH, dlogits_.get(), static_cast<size_t>(n) * kO, Sl, n,
                                        kH, kO));  // dW2 per shard (128, 10)
  TRAINER_TRY(bias_grad_groups(c, rest_local + (L::kB2 - L::kB1), RS, dlogits_.get(), static_cast<size_t>(n) * kO, Sl,
                               n, kO));                                               // db2 per shard (10)
  TRAINER_TRY(linear_backward_input(c, dd1_.get(), dlogits_.get(), w2, Bl, kH, kO));  // dd1 (Bl, 128)
  TRAINER_TRY(dropout_backward(c, dd1_.get(), dd1_.get(), mask_.get(), Bl * kH));     // da1
  TRAINER_TRY(relu_backward(c, dh1_local, dd1_.get(), a1_.get(), Bl * kH));           // dh1 (Bl, 128)
  TRAINER_TRY(bias_grad_groups(c, rest_local, RS, dh1_local, static_cast<size_t>(n) * kH, Sl, n,
                               kH));  // db1 per shard (128)

  // 2. Every rank gets every shard's dh1 and small gradients (this rank's are in place).
  if (nccl_ != nullptr) {
    TRAINER_TRY(nccl_->AllGather(dh1_local, dh1_.get(), static_cast<size_t>(Bl) * kH));
    TRAINER_TRY(nccl_->AllGather(rest_local, rest_.get(), static_cast<size_t>(Sl) * RS));
  }

  // 3. The small gradients and the loss, tree-summed over the S shards: grad[kB1 ...].
  float* g = grad_.get();
  TRAINER_TRY(tree_sum(c, g + L::kB1, rest_.get(), S, RS, kRest + 1));

  // 4. This rank's rows of dW1 over all S shards: per-shard products, then the tree.
  TRAINER_TRY(linear_weight_grad_tree(c, g + L::kW1 + static_cast<size_t>(row_begin_) * kH, x_.get(), kI, dh1_.get(),
                                      static_cast<size_t>(n) * kH, S, n, row_begin_, row_end_, kH, parts_.get()));

  // 5. Adam on what this rank owns, with alpha from the arguments; then the W1 rows.
  const float* alpha = reinterpret_cast<const float*>(args + kArgAlpha);
  if (world_ == 1) {
    return adam_update(c, p, g, m_.get(), v_.get(), static_cast<int>(L::kCount), adam_, alpha);
  }
  const size_t at = L::kW1 + static_cast<size_t>(row_begin_) * kH;
  TRAINER_TRY(adam_update(c, p + at, g + at, m_.get() + at, v_.get() + at, (row_end_ - row_begin_) * kH, adam_, alpha));
  TRAINER_TRY(adam_update(c, p + L::kB1, g + L::kB1, m_.get() + L::kB1, v_.get() + L::kB1, static_cast<int>(kRest),
                          adam_, alpha));
  return GatherRows(p);
}

Status CudaStep::GatherRows(float* buffer) {
  if (nccl_ == nullptr) return Status::Ok();
  const size_t count = static_cast<size_t>(slice_rows_) * kH;
  float* w1 = buffer + L::kW1;   // (784, 128)
  if (w1_padded_.size() == 0) {  // W * R == 784: the slices tile W1 exactly, gather in place
    return nccl_->AllGather(w1 + static_cast<size_t>(row_begin_) * kH, w1, count);
  }
  // Equal counts: the last slices are short or empty. Rows [0, 784) of the padded buffer are W1.
  float* own = w1_padded_.get() + static_cast<size_t>(rank_) * count;
  const size_t own_bytes = static_cast<size_t>(row_end_ - row_begin_) * kH * sizeof(float);
  if (own_bytes > 0) {
    CUDA_CHECK(cudaMemcpyAsync(own, w1 + static_cast<size_t>(row_begin_) * kH, own_bytes, cudaMemcpyDeviceToDevice,
                               ctx_->stream()));
  }
  TRAINER_TRY(nccl_->AllGather(own, w1_padded_.get(), count));
  CUDA_CHECK(
      cudaMemcpyAsync(w1, w1_padded_.get(), size_t{kI} * kH * sizeof(float), cudaMemcpyDeviceToDevice, ctx_->stream()));
  return Status::Ok();
}

Status CudaStep::Capture() {
  CUDA_CHECK(cudaStreamBeginCapture(ctx_->stream(), cudaStreamCaptureModeThreadLocal));
  Status enqueued = Enqueue();
  cudaGraph_t graph = nullptr;
  cudaError_t ended = cudaStreamEndCapture(ctx_->stream(), &graph);  // always end: the stream must leave capture
  if (!enqueued.ok()) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    return enqueued.error().Context("capturing the step in a CUDA graph");
  }
  CUDA_CHECK(ended);
  graph_ = graph;
  CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  CUDA_CHECK(cudaGraphUpload(exec_, ctx_->stream()));
  return Status::Ok();
}

size_t CudaStep::graph_nodes() const {
  size_t n = 0;
  if (graph_ != nullptr && cudaGraphGetNodes(graph_, nullptr, &n) != cudaSuccess) n = 0;
  return n;
}

Status CudaStep::Run(float* params, float* adam_m, float* adam_v, const std::vector<int32_t>& perm, int epoch, int step,
                     int64_t t, double* loss) {
  const int B = shape_.global_batch;
  const size_t batch0 = static_cast<size_t>(step) * B;
  if (step < 0 || perm.size() < batch0 + B) {
    return MakeError(ErrorKind::kInvalidInput, "step " + std::to_string(step) + " is past the epoch's permutation");
  }
  cudaStream_t stream = ctx_->stream();
  if (!uploaded_) {  // the state as Train restored or initialized it; the device owns it from now on
    CUDA_CHECK(cudaMemcpyAsync(params_.get(), params, params_.bytes(), cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(m_.get(), adam_m, m_.bytes(), cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(v_.get(), adam_v, v_.bytes(), cudaMemcpyHostToDevice, stream));
    uploaded_ = true;
  }

  Slot& slot = slots_[static_cast<size_t>(runs_ % kSlots)];
  if (slot.used) TRAINER_TRY(Wait(slot.done, "waiting for an earlier step"));  // its step and copies finished
  slot.args[kArgEpoch] = epoch;
  slot.args[kArgEpoch + 1] = step;
  const float alpha = cpu::adam_alpha(adam_, t);
  std::memcpy(&slot.args[kArgAlpha], &alpha, sizeof(alpha));
  slot.args[kArgAlpha + 1] = 0;
  std::memcpy(&slot.args[kArgIdx], &perm[batch0], static_cast<size_t>(B) * sizeof(int32_t));
  CUDA_CHECK(cudaMemcpyAsync(args_.get(), slot.args, args_.bytes(), cudaMemcpyHostToDevice, stream));

  if (exec_ == nullptr && options_.graph && runs_ >= 1 && graph_error_.empty()) {
    Status captured = Capture();
    if (!captured.ok()) {
      graph_error_ = captured.error().message;
      cudaGetLastError();  // a failed capture leaves no sticky error; clear the last one
      if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
      if (graph_ != nullptr) cudaGraphDestroy(graph_);
      exec_ = nullptr;
      graph_ = nullptr;
    }
  }
  if (exec_ != nullptr) {
    CUDA_CHECK(cudaGraphLaunch(exec_, stream));
  } else {
    TRAINER_TRY(Enqueue());
  }
  CUDA_CHECK(cudaMemcpyAsync(slot.loss, grad_.get() + L::kCount, sizeof(float), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaEventRecord(slot.done, stream));
  slot.used = true;
  ++runs_;
  if (loss != nullptr) {
    TRAINER_TRY(Wait(slot.done, "waiting for the step"));
    *loss = static_cast<double>(*slot.loss) / B;  // as TrainStep: the float tree sum over B
  }
  return Status::Ok();
}

Status CudaStep::Sync(float* params, float* adam_m, float* adam_v, bool moments) {
  if (!uploaded_) return Status::Ok();  // no step ran: the host buffers are the state
  if (moments) {
    TRAINER_TRY(GatherRows(m_.get()));
    TRAINER_TRY(GatherRows(v_.get()));
  }
  cudaStream_t stream = ctx_->stream();
  CUDA_CHECK(cudaMemcpyAsync(params, params_.get(), params_.bytes(), cudaMemcpyDeviceToHost, stream));
  if (moments) {
    CUDA_CHECK(cudaMemcpyAsync(adam_m, m_.get(), m_.bytes(), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaMemcpyAsync(adam_v, v_.get(), v_.bytes(), cudaMemcpyDeviceToHost, stream));
  }
  TRAINER_TRY(Wait(nullptr, "copying the state to the host"));
  return Status::Ok();
}

StepFactory MakeCudaStepFactory(CudaStepOptions options) {
  return [options](const Split& train, const StepShape& shape, uint64_t seed, const cpu::AdamConfig& adam, Comm& comm,
                   ThreadPool&) -> Result<std::unique_ptr<StepRunner>> {
    auto device = ProbeDevice(comm.rank());
    if (!device.ok()) return device.error();
    auto step = CudaStep::Create(train, shape, seed, adam, comm, device->device, options);
    if (!step.ok()) return step.error();
    return Result<std::unique_ptr<StepRunner>>(std::unique_ptr<StepRunner>(std::move(*step)));
  };
}

}  // namespace trainer::cuda
