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
//
// A file whose checksum verifies is still not trusted: before anything is allocated or
// copied from it, every header field is checked against this run (ParseCheckpoint), and
// a field that does not fit is an error naming the field, its value and what was expected.
// The RNG state is the seed alone (Philox is counter-based), a fixed 8 bytes.
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
  uint64_t param_count = 0;  // the model's (MlpLayout::kCount); a checkpoint must hold exactly this many
};

std::string CheckpointPath(const std::string& dir, int64_t step);
// The size of a checkpoint of param_count parameters.
uint64_t CheckpointBytes(uint64_t param_count);
std::string SerializeCheckpoint(const TrainState& s, const RunShape& shape);
// Errors: kIntegrity for damage (too short to be one, wrong magic, checksum mismatch, an
// unknown version); kInvalidInput for a file whose checksum verifies but which does not
// fit this run (another run shape, a parameter count other than the model's, a size
// other than that count implies, a position outside the epoch, a nonzero reserved field).
Result<TrainState> ParseCheckpoint(const std::string& bytes, const RunShape& shape, const std::string& name);

Status WriteCheckpoint(const std::string& dir, const TrainState& s, const RunShape& shape, int keep);

struct Restored {
  TrainState state;
  std::string path;
  std::vector<std::string> skipped;  // "<file>: <why>" for each newer file that was unusable
};

// The newest valid checkpoint in dir; path is empty when there is none (a fresh start).
// One rule for every candidate named like a checkpoint that cannot be read as one: not
// a regular file (a folder, a FIFO, a symlink, a device, a socket: opened without
// following or waiting, imgtool/fs/safe_open.h), unreadable, truncated or failing its
// checksum, or holding another step than its name: it is skipped and listed with its
// reason, and the previous one tried. When every one is skipped that is an error
// (kIntegrity), not a fresh start that would bury them. A checkpoint that reads but does
// not fit this run (ParseCheckpoint's kInvalidInput: seed, batch, shards, data, lr,
// parameter count, positions) is an error too: resuming past it would train another run.
Result<Restored> RestoreLatest(const std::string& dir, const RunShape& shape, uint64_t seed);

}  // namespace trainer
