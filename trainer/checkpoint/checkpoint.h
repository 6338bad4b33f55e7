// Checkpoints for resume (Keras's BackupAndRestore, made bitwise): weights, Adam moments,
// and where the run stands (step, epoch, position in the epoch, RNG key = the seed).
// Because every random number is a pure function of (seed, epoch, step, sample), that is
// all a resumed run needs to continue exactly as the uninterrupted one would have.
//
// File DIR/ckpt-<step, 10 digits>.bin, little-endian:
//   "TRNCKPT1"  u32 version=1  u32 header_bytes=56
//   i64 step  i32 epoch  i32 step_in_epoch  u64 seed  i32 global_batch  i32 shards
//   i32 train_count  u32 lr_bits  u64 param_count  u64 reserved=0
//   f32 params[param_count]  f32 adam_m[param_count]  f32 adam_v[param_count]
//   sha256 of every byte above (32 bytes)
// Written atomically (temp, fsync, rename); the newest `keep` files are kept.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace trainer {

struct TrainState {
  int64_t step = 0;           // optimizer steps completed
  int32_t epoch = 0;          // epoch to run next
  int32_t step_in_epoch = 0;  // first step of `epoch` still to run
  uint64_t seed = 0;          // the RNG key
  std::vector<float> params, adam_m, adam_v;
};

// What must match between the run that wrote a checkpoint and the one resuming it.
struct RunShape {
  int32_t global_batch = 0;
  int32_t shards = 0;
  int32_t train_count = 0;
  float lr = 0;
  // The parameters the model has; a checkpoint holding another count is refused (its
  // buffers would not fit the model's). 0: not checked (tests of the format alone).
  uint64_t param_count = 0;
};

std::string CheckpointPath(const std::string& dir, int64_t step);
std::string SerializeCheckpoint(const TrainState& s, const RunShape& shape);
Result<TrainState> ParseCheckpoint(const std::string& bytes, const RunShape& shape, const std::string& name);

Status WriteCheckpoint(const std::string& dir, const TrainState& s, const RunShape& shape, int keep);

struct Restored {
  TrainState state;
  std::string path;
  std::vector<std::string> skipped;  // "<file>: <why>" for each newer file that was unusable
};

// The newest valid checkpoint in dir; path is empty when there is none (a fresh start).
// Corrupt files are skipped and listed; a checkpoint of a different run shape (seed,
// batch, shards, data, lr) is an error, not a silent fresh start.
Result<Restored> RestoreLatest(const std::string& dir, const RunShape& shape, uint64_t seed);

}  // namespace trainer
