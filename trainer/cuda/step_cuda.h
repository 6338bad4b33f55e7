// CudaStep: the data-parallel step of train/step.h with one GPU per rank, as a
// StepRunner. The same division of work and the same fixed summation tree: rank r runs its
// shards up to dh1 and the small gradients (one shard per group of rows, each summed by
// itself), the pieces are allgathered (NCCL, W > 1), every rank tree-sums the small
// gradients over the S shards, computes dW1 for its own rows for all S shards (per-shard
// cuBLAS products, then the tree), runs Adam on what it owns and allgathers the W1 rows.
//
// On the device for the whole run: the training set, the parameters, the Adam moments and
// every buffer of the step. Per step only the batch's example indices, (epoch, step) for
// the dropout counters and Adam's alpha (computed on the host, cpu::adam_alpha) are
// uploaded, and the loss (4 bytes) comes back. The first step runs eagerly; then the
// whole step (every kernel, cuBLAS and cuDNN call, and the NCCL allgathers) is captured
// once in a CUDA graph and each later step is one cudaGraphLaunch.
//
// Determinism: one stream, cuBLAS in pedantic fp32 with atomics disallowed and a fixed
// workspace, reductions without atomics, so two runs on the same GPU model with the same
// CUDA/cuBLAS versions and world size give the same weights. Not promised: the CPU's bits
// (cuBLAS sums in its own order; see ops.h), or the same bits for another world size
// (cuBLAS may pick another kernel for the per-rank shapes).
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/comm.h"
#include "core/result.h"
#include "cpu/ops.h"
#include "cuda/device.h"
#include "cuda/nccl_comm.h"
#include "cuda/ops.h"
#include "data/dataset.h"
#include "train/step.h"
#include "train/step_runner.h"

namespace trainer::cuda {

struct CudaStepOptions {
  bool graph = true;  // capture the step in a CUDA graph after the first step (false: always eager)
  // --collective-timeout: with more than one rank, a wait for the device that sees no end
  // by then aborts NCCL and fails (cuda/collective_wait.h), rather than hanging on a dead peer.
  std::chrono::milliseconds collective_timeout{std::chrono::seconds(120)};
};

class CudaStep : public StepRunner {
 public:
  // On `device` (the calling thread's device from now on). `host` is the trainer's Comm:
  // it bootstraps NCCL when it has more than one rank. Copies the training set to the GPU.
  static Result<std::unique_ptr<CudaStep>> Create(const Split& train, const StepShape& shape, uint64_t seed,
                                                  const cpu::AdamConfig& adam, Comm& host, int device,
                                                  CudaStepOptions options = {});
  ~CudaStep() override;
  CudaStep(const CudaStep&) = delete;
  CudaStep& operator=(const CudaStep&) = delete;

  Status Run(float* params, float* adam_m, float* adam_v, const std::vector<int32_t>& perm, int epoch, int step,
             int64_t t, double* loss) override;
  Status Sync(float* params, float* adam_m, float* adam_v, bool moments) override;

  bool graph_captured() const { return exec_ != nullptr; }
  // Why the step could not be captured ("" when it was, or was not tried): the step then
  // stays eager (same results, slower) rather than failing the run.
  const std::string& graph_error() const { return graph_error_; }
  size_t graph_nodes() const;  // kernels, copies and collectives in the captured step (0: none)

  // The W1 rows rank `rank` of `world` owns: train/step.h's OwnedRows, recomputed here
  // because the plugin links none of the trainer's libraries (step_cuda_test compares).
  static RowSlice W1Rows(int rank, int world);

 private:
  CudaStep() = default;
  Status Allocate(const Split& train);
  Status Enqueue();                  // the whole step, on the stream (eagerly or into a capture)
  Status Capture();                  // Enqueue into a CUDA graph, instantiated in exec_
  Status GatherRows(float* buffer);  // the W1 rows of `buffer` (kCount, device) from their owners
  // Until `event` (nullptr: all the stream's work) has completed, polling NCCL's errors and
  // the collective timeout; "<what>: ..." on failure, with NCCL aborted.
  Status Wait(cudaEvent_t event, const char* what);

  // Per-step arguments on the device, int32 words: (epoch, step, alpha as float bits, 0,
  // then the B example indices).
  static constexpr int kArgEpoch = 0, kArgAlpha = 2, kArgIdx = 4;
  // Pinned host slots for the arguments and the loss, reused round robin: the host may run
  // up to kSlots steps ahead of the GPU.
  static constexpr int kSlots = 8;
  struct Slot {
    int32_t* args = nullptr;  // (kArgIdx + B), pinned
    float* loss = nullptr;    // (1), pinned
    cudaEvent_t done = nullptr;
    bool used = false;
  };

  std::unique_ptr<Context> ctx_;    // first: destroyed last
  std::unique_ptr<NcclComm> nccl_;  // W > 1 only
  StepShape shape_;
  uint64_t seed_ = 0;
  cpu::AdamConfig adam_;
  CudaStepOptions options_;
  int rank_ = 0, world_ = 1;
  int n_ = 0, local_shards_ = 0, first_shard_ = 0, local_rows_ = 0;  // shard size, this rank's shards and rows
  int row_begin_ = 0, row_end_ = 0, slice_rows_ = 0;                 // owned W1 rows; R of the W1 allgather
  size_t rest_stride_ = 0;                                           // one shard's b1, W2, b2 grads + loss
  bool uploaded_ = false;
  std::string graph_error_;
  int64_t runs_ = 0;

  DeviceArray<float> images_;                     // (count, 784)
  DeviceArray<uint8_t> labels_;                   // (count)
  DeviceArray<float> params_, m_, v_;             // (kCount)
  DeviceArray<float> grad_;                       // (kCount + 1): the summed gradient, then the summed loss
  DeviceArray<int32_t> args_;                     // (kArgIdx + B)
  DeviceArray<float> x_;                          // (B, 784): the whole global batch (dW1 needs every shard)
  DeviceArray<uint8_t> y_;                        // (B)
  DeviceArray<float> mask_, h1_, a1_, d1_, dd1_;  // (local_rows, 128)
  DeviceArray<float> logits_, dlogits_;           // (local_rows, 10)
  DeviceArray<float> dh1_;                        // (B, 128): every shard's dh1, this rank's rows computed here
  DeviceArray<float> rest_;                       // (S, rest_stride): per shard db1, dW2, db2, loss
  DeviceArray<float> parts_;                      // (S, owned rows, 128): per-shard dW1 rows before the tree
  DeviceArray<float> w1_padded_;                  // (W, R, 128) when W * R != 784, else empty

  std::vector<Slot> slots_;
  void* pinned_ = nullptr;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// Train's step factory for --backend cuda: a CudaStep on device rank % visible devices.
StepFactory MakeCudaStepFactory(CudaStepOptions options = {});

}  // namespace trainer::cuda
