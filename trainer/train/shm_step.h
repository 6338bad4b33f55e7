// ShmStep: the step of train/step.h for ranks that share one host's memory
// (comm/shm_comm.h SharedWork), with the work handed out as it is done instead of split
// in fixed halves, so a core that a neighbour slows down does less of it and the other
// does not wait. The arithmetic is TrainStep's, piece for piece, so the weights have the
// same bits as on 1 worker and over Gloo:
//   round 1, S tasks: shard s, forward and backward up to dh1 and the small gradients,
//      written to block s of the shared region (TrainStep's shards_ layout);
//   round 2, 50 tasks: W1 rows [16i, 16i+16): their dW1 tree over the S shards, then Adam
//      on those rows of the shared parameters and moments; and one task that tree-sums
//      the small gradients and the loss and runs Adam on b1, W2, b2.
// The parameters and the Adam moments live once, in the shared region, so there is no
// gather at all; the host buffers are current after Sync (as with a device runner).
// Every round begins only when every rank has entered it (SharedWork::BeginRound), so
// a rank still reading the previous round's results is never overwritten.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "comm/shm_comm.h"
#include "train/step_runner.h"

namespace trainer {

class ShmStep : public StepRunner {
 public:
  // Bytes of SharedWork region the step needs for this shape (ShmCommOptions::shared_bytes).
  static size_t RegionBytes(const StepShape& shape);

  ShmStep(SharedWork& shared, const Split& train, StepShape shape, uint64_t seed, const cpu::AdamConfig& adam,
          ThreadPool& pool);

  Status Run(float* params, float* adam_m, float* adam_v, const std::vector<int32_t>& perm, int epoch, int step,
             int64_t t, double* loss) override;
  Status Sync(float* params, float* adam_m, float* adam_v, bool moments) override;
  StepPhases Phases() const override { return phases_; }

 private:
  // Runs tasks of the current round on every thread of this rank until none is left.
  void ClaimAll(const std::function<void(int task)>& run);

  SharedWork& shared_;
  const Split& train_;
  StepShape shape_;
  uint64_t seed_;
  cpu::AdamConfig adam_;
  ThreadPool& pool_;
  int shard_size_;
  size_t rest_offset_, stride_;                          // as in TrainStep
  float *params_, *adam_m_, *adam_v_, *blocks_, *loss_;  // in the shared region
  bool loaded_ = false;
  std::vector<float> rest_;                               // (S, kRest + 1): this rank's copy to tree-sum
  std::vector<const float*> in_rows_;                     // (B): each example's x row in the dataset
  std::vector<float> x_, mask_;                           // per shard: (shard_size, 784), (shard_size, 128)
  std::vector<uint8_t> y_;                                // per shard: (shard_size)
  std::vector<std::unique_ptr<MlpWorkspace<float>>> ws_;  // per shard
  StepPhases phases_;
};

}  // namespace trainer
