// One data-parallel gradient, the same bits on any number of workers.
//
// The global batch (B examples at positions perm[step*B ...]) is cut into S micro-shards
// of B/S examples. Shard s is always computed the same way, alone, by whichever thread of
// whichever rank owns it. The S shard gradients are then summed in one fixed order: a
// balanced binary tree over the shards in shard order,
//     level 1: (g0+g1) (g2+g3) ...   level 2: ((g0+g1)+(g2+g3)) ...   and so on.
// Rank r owns the contiguous shards [r*S/W, (r+1)*S/W): a whole subtree, since S and W
// are powers of two. So each rank sums its own subtree locally, the W subtree sums are
// allgathered (one gradient per rank on the wire, not S/W), and every rank finishes the
// same tree in rank order. The additions performed are identical for W = 1, 2, 4, 8, ...
// which is why the weights digest does not depend on the world size.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "comm/comm.h"
#include "core/result.h"
#include "core/thread_pool.h"
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

class GradientStep {
 public:
  GradientStep(const Split& train, StepShape shape, uint64_t seed, Comm& comm, ThreadPool& pool);

  // grad (kCount) = d/dparams of the mean loss over the global batch `step` of `epoch`
  // (whose order is `perm`); *loss = that mean loss.
  Status Run(const float* params, const std::vector<int32_t>& perm, int epoch, int step, float* grad, double* loss);

 private:
  const Split& train_;
  StepShape shape_;
  uint64_t seed_;
  Comm& comm_;
  ThreadPool& pool_;
  int shard_size_, local_shards_, first_shard_;
  size_t stride_;                 // kCount + 1 (the loss), rounded up to 16 floats
  std::vector<float> local_;      // (local_shards, stride)
  std::vector<float> gathered_;   // (world, stride)
  std::vector<float> x_;          // (local_shards, shard_size, 784)
  std::vector<uint8_t> y_;        // (local_shards, shard_size)
  std::vector<float> mask_;       // (local_shards, shard_size, 128)
  std::vector<std::unique_ptr<MlpWorkspace<float>>> ws_;  // one per local shard
};

}  // namespace trainer
