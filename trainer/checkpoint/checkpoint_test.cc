#include "checkpoint/checkpoint.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/atomic_file.h"

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

// A FIFO named like the newest checkpoint once hung the trainer in open(). A crash never
// leaves one, so it is refused at once, naming it, rather than skipped or waited on.
TEST(Checkpoint, FifoIsRefusedAtOnce) {
  std::string dir = FreshDir("trainer_ckpt_fifo");
  ASSERT_TRUE(WriteCheckpoint(dir, Make(10), kShape, 3).ok());
  const std::string fifo = CheckpointPath(dir, 20);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  auto r = RestoreLatest(dir, kShape, 42);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(r.error().message,
            "reading " + fifo + ": a FIFO, not a regular file; remove it or use a fresh --checkpoint-dir");
  std::filesystem::remove(fifo);
  r = RestoreLatest(dir, kShape, 42);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state.step, 10);
}

TEST(Checkpoint, EmptyOrMissingDirIsAFreshStart) {
  auto r = RestoreLatest(FreshDir("trainer_ckpt_none"), kShape, 42);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->path.empty());
}

}  // namespace
}  // namespace trainer
