// One data-parallel optimizer step, the same bits on any number of workers.
//
// The global batch (B examples at positions perm[step*B ...]) is cut into S micro-shards
// of B/S examples. Shard s is always computed the same way, alone, by whichever thread of
// whichever rank owns it. The S shard gradients are then summed in one fixed order: a
// balanced binary tree over the shards in shard order,
//     level 1: (g0+g1) (g2+g3) ...   level 2: ((g0+g1)+(g2+g3)) ...   and so on.
// The additions performed are identical for W = 1, 2, 4, 8, ... which is why the weights
// digest does not depend on the world size.
//
// Who computes what (rank r of W; R = ceil(784 / W) rows of W1 per rank):
//   1. For its shards [r*S/W, (r+1)*S/W): forward, loss, and the backward pass except
//      layer 1's weight gradient: dh1 (shard, 128) and the small gradients (b1, W2, b2).
//   2. One allgather of those (about 10 KB per shard at B/S = 8) instead of the 400 KB
//      gradient: dW1 is 96% of the parameters but x^T @ dh1 is cheap to rebuild.
//   3. Every rank tree-sums the small gradients over the S shards, identically.
//   4. Rank r computes dW1 only for its rows [r*R, (r+1)*R) of W1, for all S shards (x
//      comes from the dataset, which every rank has), each shard accumulated as alone and
//      the tree run on register tiles (cpu::linear_weight_grad_tree).
//   5. Adam: rank r updates its W1 rows; every rank updates b1, W2, b2 (same bits). One
//      allgather of the W1 rows then gives every rank the full parameters.
// So the Adam moments of W1 are current only on each row's owner; GatherMoments makes
// them current everywhere, for a checkpoint.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/comm.h"
#include "core/result.h"
#include "core/thread_pool.h"
#include "cpu/ops.h"
#include "data/dataset.h"
#include "model/mlp.h"

namespace trainer {

struct StepShape {
  int global_batch = 64;
  int shards = 8;
};

// Checks B, S and W fit together (S a power of two dividing B, W dividing S).
Status ValidateStepShape(const StepShape& shape, int world_size);

// Sums `count` blocks of `n` floats laid out `stride` apart into block 0, by the pairwise
// tree described above. count must be a power of two.
void TreeSum(float* blocks, int count, size_t stride, size_t n, ThreadPool& pool);

// Step 1 for one shard, the same wherever it runs (TrainStep, ShmStep): gathers its
// examples (positions batch0 + shard*n ...) into x (n, 784) and y (n), draws its dropout
// mask (n, 128), and writes block: dh1 (n, 128) at 0, the small gradients at rest_offset,
// then the shard's loss.
struct ShardScratch {
  float* x;
  uint8_t* y;
  float* mask;
  MlpWorkspace<float>* ws;
};
void ComputeShard(const float* params, const Split& train, const std::vector<int32_t>& perm, size_t batch0, int shard,
                  int n, uint64_t seed, int epoch, int step, double scale, const ShardScratch& scratch, float* block,
                  size_t rest_offset);

// Steps 4-5 for W1 rows [lo, hi) (hi - lo <= 16): their dW1 over the S shard blocks
// (dh1 at the start of each, `stride` apart) and the examples' x rows, then Adam on them.
void UpdateW1Rows(float* params, float* adam_m, float* adam_v, const float* const* in_rows, const float* blocks,
                  size_t stride, int shards, int shard_size, int lo, int hi, const cpu::AdamConfig& adam, int64_t t);

// The W1 rows [begin, end) that rank `rank` of `world` owns.
struct RowSlice {
  int begin, end;
};
RowSlice OwnedRows(int rank, int world);

// Where a rank's step time went, summed over the steps run (wall time on this rank; a
// collective's time includes waiting for the slowest peer). ShmStep (shm_step.h) counts
// its two rounds the same way: their tasks as compute and update, the waits around them
// as exchange and gather.
struct StepPhases {
  double compute_s = 0;   // 1: this rank's shards up to dh1
  double exchange_s = 0;  // 2: the allgather of dh1 and the small gradients
  double update_s = 0;    // 3-5: tree sums, dW1 of this rank's rows, Adam
  double gather_s = 0;    // the allgather of the W1 rows
  int64_t steps = 0;
};

// Adds the seconds since `*mark` to `*total` and moves the mark: one clock read per phase.
void Lap(std::chrono::steady_clock::time_point* mark, double* total);

class TrainStep {
 public:
  TrainStep(const Split& train, StepShape shape, uint64_t seed, const cpu::AdamConfig& adam, Comm& comm,
            ThreadPool& pool);

  // Optimizer step t (1-based) on the global batch `step` of `epoch` (whose order is
  // `perm`). params (kCount) are whole and identical on every rank before and after;
  // adam_m / adam_v (kCount) are kept current for b1, W2, b2 and for this rank's W1 rows.
  // *loss = the mean loss over the global batch.
  Status Run(float* params, float* adam_m, float* adam_v, const std::vector<int32_t>& perm, int epoch, int step,
             int64_t t, double* loss);

  // Gives every rank every owner's W1 rows of adam_m and adam_v (a collective).
  Status GatherMoments(float* adam_m, float* adam_v);

  const StepPhases& phases() const { return phases_; }

 private:
  Status GatherRows(float* buffer);  // the W1 rows of `buffer` (kCount) from their owners

  const Split& train_;
  StepShape shape_;
  uint64_t seed_;
  cpu::AdamConfig adam_;
  Comm& comm_;
  ThreadPool& pool_;
  int shard_size_, local_shards_, first_shard_;
  RowSlice rows_;
  int slice_rows_;                                        // R: rows per rank in the W1 allgather
  size_t rest_offset_;                                    // where b1, W2, b2 start in a shard's block
  size_t stride_;                                         // dh1 + rest + the loss, rounded up to 16 floats
  std::vector<float> shards_;                             // (S, stride): dh1 (shard_size, 128), rest, loss
  std::vector<const float*> in_rows_;                     // (B): each example's x row (784) in the dataset
  std::vector<float> padded_;                             // (W, R, 128) when W*R != 784, else empty
  std::vector<float> x_;                                  // (local_shards, shard_size, 784)
  std::vector<uint8_t> y_;                                // (local_shards, shard_size)
  std::vector<float> mask_;                               // (local_shards, shard_size, 128)
  std::vector<std::unique_ptr<MlpWorkspace<float>>> ws_;  // one per local shard
  StepPhases phases_;
};

}  // namespace trainer
