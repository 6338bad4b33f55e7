// StepRunner: what the training loop (train.h) needs from an optimizer step, so that a
// device backend can keep the parameters on its device between steps. The CPU TrainStep
// (step.h) is one, through CpuStepRunner; the CUDA backend (trainer/cuda) is another.
// This is a seam, not a second step: both run the step that step.h describes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "comm/comm.h"
#include "core/result.h"
#include "core/thread_pool.h"
#include "cpu/ops.h"
#include "data/dataset.h"
#include "train/step.h"

namespace trainer {

class StepRunner {
 public:
  virtual ~StepRunner() = default;

  // TrainStep::Run. `loss` may be null when the caller does not need this step's loss; a
  // device backend then returns without waiting for the step to finish. A device runner
  // reads params, adam_m and adam_v at its first Run only and owns the state after that:
  // the host buffers are current again after Sync.
  virtual Status Run(float* params, float* adam_m, float* adam_v, const std::vector<int32_t>& perm, int epoch, int step,
                     int64_t t, double* loss) = 0;

  // Makes the host buffers current: params, and with `moments` also adam_m and adam_v for
  // every W1 row (a collective then, called by every rank: TrainStep::GatherMoments).
  virtual Status Sync(float* params, float* adam_m, float* adam_v, bool moments) = 0;

  // Where the steps' time went; all zero for a runner that does not time its phases.
  virtual StepPhases Phases() const { return {}; }
};

// Builds the runner that Train uses, once, after any checkpoint was restored.
using StepFactory =
    std::function<Result<std::unique_ptr<StepRunner>>(const Split& train, const StepShape& shape, uint64_t seed,
                                                      const cpu::AdamConfig& adam, Comm& comm, ThreadPool& pool)>;

// The CPU reference step: its host buffers are always current.
class CpuStepRunner : public StepRunner {
 public:
  CpuStepRunner(const Split& train, StepShape shape, uint64_t seed, const cpu::AdamConfig& adam, Comm& comm,
                ThreadPool& pool)
      : step_(train, shape, seed, adam, comm, pool) {}
  Status Run(float* params, float* adam_m, float* adam_v, const std::vector<int32_t>& perm, int epoch, int step,
             int64_t t, double* loss) override {
    double unused = 0;
    return step_.Run(params, adam_m, adam_v, perm, epoch, step, t, loss != nullptr ? loss : &unused);
  }
  Status Sync(float*, float* adam_m, float* adam_v, bool moments) override {
    return moments ? step_.GatherMoments(adam_m, adam_v) : Status::Ok();
  }
  StepPhases Phases() const override { return step_.phases(); }

 private:
  TrainStep step_;
};

}  // namespace trainer
