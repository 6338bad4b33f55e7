#include "checkpoint/checkpoint.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/atomic_file.h"
#include "core/sha256.h"

namespace trainer {
namespace {

TrainState Make(int64_t step) {
  TrainState s;
  s.step = step;
  s.epoch = 2;
  s.step_in_epoch = 7;
  s.seed = 42;
  s.params = {1.5f, -2.0f, static_cast<float>(step)};
  s.adam_m = {0.1f, 0.2f, 0.3f};
  s.adam_v = {1e-8f, 2e-8f, 3e-8f};
  return s;
}

const RunShape kShape{64, 8, 60000, 1e-3f};

std::string FreshDir(const char* name) {
  auto d = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(d);
  return d.string();
}

TEST(Checkpoint, RoundTrip) {
  auto s = Make(10);
  auto back = ParseCheckpoint(SerializeCheckpoint(s, kShape), kShape, "c");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->step, 10);
  EXPECT_EQ(back->epoch, 2);
  EXPECT_EQ(back->step_in_epoch, 7);
  EXPECT_EQ(back->seed, 42u);
  EXPECT_EQ(back->params, s.params);
  EXPECT_EQ(back->adam_m, s.adam_m);
  EXPECT_EQ(back->adam_v, s.adam_v);
}

TEST(Checkpoint, DetectsCorruptionAndMismatch) {
  std::string bytes = SerializeCheckpoint(Make(10), kShape);
  std::string flipped = bytes;
  flipped[100] ^= 1;
  EXPECT_EQ(ParseCheckpoint(flipped, kShape, "c").error().message, "c: checksum mismatch");
  EXPECT_EQ(ParseCheckpoint(bytes.substr(0, 50), kShape, "c").error().message, "c: truncated (50 bytes)");
  RunShape other = kShape;
  other.shards = 4;
  auto r = ParseCheckpoint(bytes, other, "c");
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(r.error().message, "c: written by a run with --shards 8, this run has 4 (use a fresh --checkpoint-dir)");
}

// Found by tests/fuzz (fuzz_checkpoint). The parameter count is the file's word: it was
// multiplied before the length check, so 2^62 parameters wrapped 3 * n * 4 around to 0,
// passed, and resize() threw (the process ended); and 0 parameters handed memcpy a null
// pointer. Both need a valid checksum, which anyone who writes the file can compute.
TEST(Checkpoint, ParameterCountFromTheFileIsChecked) {
  TrainState none = Make(10);
  none.params.clear();
  none.adam_m.clear();
  none.adam_v.clear();
  std::string bytes = SerializeCheckpoint(none, kShape);
  auto zero = ParseCheckpoint(bytes, kShape, "c");
  ASSERT_TRUE(zero.ok()) << zero.error().message;
  EXPECT_TRUE(zero->params.empty());

  bytes.resize(bytes.size() - 32);
  uint64_t n = uint64_t{1} << 62;
  std::memcpy(bytes.data() + 56, &n, sizeof n);  // param_count, after the 56 header bytes before it
  Sha256Bytes sum = Sha256(bytes.data(), bytes.size());
  bytes.append(reinterpret_cast<const char*>(sum.data()), sum.size());
  auto huge = ParseCheckpoint(bytes, kShape, "c");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().kind, ErrorKind::kIntegrity);
  EXPECT_EQ(huge.error().message, "c: length does not match its header");

  // A count that is not the model's would not fit its buffers.
  RunShape model = kShape;
  model.param_count = 101770;
  auto other = ParseCheckpoint(SerializeCheckpoint(Make(10), kShape), model, "c");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(other.error().message,
            "c: written by a run with a model of 3 parameters, this run has 101770 (use a fresh --checkpoint-dir)");
}

TEST(Checkpoint, NewestValidWinsAndOldOnesArePruned) {
  std::string dir = FreshDir("trainer_ckpt_test");
  for (int64_t step : {5, 10, 15, 20}) ASSERT_TRUE(WriteCheckpoint(dir, Make(step), kShape, 3).ok());
  EXPECT_FALSE(std::filesystem::exists(CheckpointPath(dir, 5)));
  auto r = RestoreLatest(dir, kShape, 42);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state.step, 20);
  EXPECT_TRUE(r->skipped.empty());

  // Corrupt the newest: the previous one is used and the skip is reported.
  {
    std::fstream f(CheckpointPath(dir, 20), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(80);
    f.put('\x7f');
  }
  r = RestoreLatest(dir, kShape, 42);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state.step, 15);
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_EQ(r->skipped[0], CheckpointPath(dir, 20) + ": checksum mismatch");

  auto wrong_seed = RestoreLatest(dir, kShape, 7);
  ASSERT_FALSE(wrong_seed.ok());
  EXPECT_NE(wrong_seed.error().message.find("--seed 42, this run has --seed 7"), std::string::npos);
}

TEST(Checkpoint, EmptyOrMissingDirIsAFreshStart) {
  auto r = RestoreLatest(FreshDir("trainer_ckpt_none"), kShape, 42);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->path.empty());
}

}  // namespace
}  // namespace trainer
