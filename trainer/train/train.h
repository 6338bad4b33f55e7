// The training loop: epochs of data-parallel steps, Adam, checkpoints, evaluation and
// TensorBoard scalars. It reports through TrainObserver and returns a summary; it never
// prints. The chief (rank 0) alone evaluates, logs and writes checkpoints.
#pragma once

#include <cstdint>
#include <string>

#include "comm/comm.h"
#include "core/result.h"
#include "data/dataset.h"
#include "train/step_runner.h"

namespace trainer {

struct TrainConfig {
  int epochs = 10;
  int64_t max_steps = 0;  // 0: no limit
  int global_batch = 64;
  int shards = 8;
  uint64_t seed = 42;
  float lr = 1e-3f;
  std::string checkpoint_dir;  // empty: no checkpoints
  int checkpoint_every = 0;    // steps; 0: only at epoch ends
  int checkpoint_keep = 3;
  std::string logdir;  // empty: no TensorBoard events
  int log_every = 100;
  int threads = 1;
  int throttle_ms = 0;  // sleep after each step (tests use it to kill a run mid-way)
};

struct StepReport {
  int64_t step = 0;
  int epoch = 0;
  double loss = 0;
  double samples_per_sec = 0;
};

struct EpochReport {
  int epoch = 0;  // 0-based index of the epoch just finished
  double test_accuracy = 0;
  double test_loss = 0;
};

class TrainObserver {
 public:
  virtual ~TrainObserver() = default;
  virtual void OnStep(const StepReport&) {}
  virtual void OnEpoch(const EpochReport&) {}
  virtual void OnNote(const std::string&) {}  // resume, skipped checkpoints
};

struct TrainSummary {
  std::string digest;  // "sha256:<hex>" of the final parameter buffer (README: byte order)
  int64_t steps = 0;
  int epochs_completed = 0;
  double test_accuracy = 0;
  double test_loss = 0;
  double last_loss = 0;
  double samples_per_sec = 0;  // training steps only: no evaluation or checkpoint time
  double train_seconds = 0;
  int64_t resumed_from_step = -1;
  StepPhases phases;  // this rank's step time by phase (zero for the CUDA runner)
};

// make_step: the step engine (train/step_runner.h); empty for the CPU step (train/step.h),
// the CUDA backend passes its own.
Result<TrainSummary> Train(const TrainConfig& config, const Dataset& data, Comm& comm, TrainObserver& observer,
                           const StepFactory& make_step = {});

}  // namespace trainer
