#include "checkpoint/checkpoint.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "core/atomic_file.h"
#include "core/sha256.h"
#include "model/mlp.h"

namespace trainer {
namespace {

constexpr int64_t kPerEpoch = 60000 / 64;  // 937
const RunShape kShape{64, 8, 60000, 1e-3f, 3};

TrainState Make(int64_t step, size_t n = 3) {
  TrainState s;
  s.step = step;
  s.epoch = static_cast<int32_t>(step / kPerEpoch);
  s.step_in_epoch = static_cast<int32_t>(step % kPerEpoch);
  s.seed = 42;
  for (size_t i = 0; i < n; ++i) {
    s.params.push_back(static_cast<float>(i) - 1.5f + static_cast<float>(step));
    s.adam_m.push_back(0.1f * static_cast<float>(i));
    s.adam_v.push_back(1e-8f * static_cast<float>(i));
  }
  return s;
}

// A folder of this test's own: ctest runs each test as its own process, in parallel, so a
// fixed name would be shared by every test of a fixture (and by two suites at once).
std::string FreshDir(const char* name) {
  std::string pattern = (std::filesystem::temp_directory_path() / name).string() + ".XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp " << pattern << ": " << std::strerror(errno);
  return pattern;
}

// Byte offsets of the header fields (checkpoint.h).
constexpr size_t kHeaderBytesAt = 12, kStepAt = 16, kEpochAt = 24, kStepInEpochAt = 28, kParamCountAt = 56,
                 kReservedAt = 64;

template <typename V>
void Poke(std::string* bytes, size_t at, V v) {
  std::memcpy(bytes->data() + at, &v, sizeof(v));
}

// What a forger does: change the bytes, then write a checksum that verifies.
std::string Resum(std::string bytes) {
  bytes.resize(bytes.size() - 32);
  Sha256Bytes sum = Sha256(bytes.data(), bytes.size());
  bytes.append(reinterpret_cast<const char*>(sum.data()), sum.size());
  return bytes;
}

std::string Forged(const std::function<void(std::string*)>& change, const TrainState& s = Make(10),
                   const RunShape& shape = kShape) {
  std::string bytes = SerializeCheckpoint(s, shape);
  change(&bytes);
  return Resum(std::move(bytes));
}

std::string ParseError(const std::string& bytes, const RunShape& shape = kShape) {
  auto r = ParseCheckpoint(bytes, shape, "c");
  if (r.ok()) return "accepted";
  return std::string(ErrorKindName(r.error().kind)) + ": " + r.error().message;
}

TEST(Checkpoint, RoundTrip) {
  auto s = Make(2 * kPerEpoch + 7);
  auto back = ParseCheckpoint(SerializeCheckpoint(s, kShape), kShape, "c");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->step, 2 * kPerEpoch + 7);
  EXPECT_EQ(back->epoch, 2);
  EXPECT_EQ(back->step_in_epoch, 7);
  EXPECT_EQ(back->seed, 42u);
  EXPECT_EQ(back->params, s.params);
  EXPECT_EQ(back->adam_m, s.adam_m);
  EXPECT_EQ(back->adam_v, s.adam_v);
  EXPECT_EQ(SerializeCheckpoint(s, kShape).size(), CheckpointBytes(3));
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

// Files whose checksum verifies, written for another parameter count: each one is refused
// naming the count, before anything is sized from it (these used to segfault the trainer,
// abort it, or be taken silently).
TEST(Checkpoint, ParameterCountMustBeTheModels) {
  const uint64_t model = MlpLayout::kCount;  // 101,770
  const RunShape shape{64, 8, 60000, 1e-3f, model};
  const std::string want = ", expected 101770 (this model's parameter count)";
  for (uint64_t n : {uint64_t{0}, uint64_t{10}, model + 1}) {
    EXPECT_EQ(ParseError(SerializeCheckpoint(Make(10, n), shape), shape),
              "invalid input: c: header field param_count is " + std::to_string(n) + want);
  }
  EXPECT_EQ(ParseError(SerializeCheckpoint(Make(10, model), shape), shape), "accepted");

  // 2^62 in a file of the real size, and in a 104-byte file: there 3 * 2^62 * 4 wraps to 0,
  // so the old length check passed and the trainer tried to allocate 2^62 floats.
  const uint64_t huge = uint64_t{1} << 62;
  auto count = [&](std::string* b) { Poke(b, kParamCountAt, huge); };
  const std::string huge_msg = "invalid input: c: header field param_count is 4611686018427387904" + want;
  EXPECT_EQ(ParseError(Forged(count, Make(10, model), shape), shape), huge_msg);
  EXPECT_EQ(ParseError(Forged(count, Make(10, 0), shape), shape), huge_msg);
}

// Found by tests/fuzz (fuzz_checkpoint): a model of 0 parameters handed memcpy the null
// data() of an empty vector (UBSan). Only a caller's shape can say 0; it reads back empty.
TEST(Checkpoint, ZeroParametersReadBackEmpty) {
  const RunShape shape{64, 8, 60000, 1e-3f, 0};
  auto r = ParseCheckpoint(SerializeCheckpoint(Make(10, 0), shape), shape, "c");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->params.empty() && r->adam_m.empty() && r->adam_v.empty());
}

TEST(Checkpoint, SizeAndLengthsAreBoundedByTheFile) {
  const uint64_t model = MlpLayout::kCount;
  const RunShape shape{64, 8, 60000, 1e-3f, model};
  // Four bytes more than 101,770 parameters need, checksum recomputed.
  std::string longer = Forged([](std::string* b) { b->insert(b->size() - 32, 4, '\0'); }, Make(10, model), shape);
  EXPECT_EQ(ParseError(longer, shape), "invalid input: c: 1221348 bytes, expected 1221344 for 101770 parameters");
  // A huge declared header length.
  EXPECT_EQ(ParseError(Forged([](std::string* b) { Poke<uint32_t>(b, kHeaderBytesAt, 0xffffffffu); })),
            "invalid input: c: header field header_bytes is 4294967295, expected 56");
  // Truncated: the checksum no longer verifies (damage: RestoreLatest tries an older one).
  std::string whole = SerializeCheckpoint(Make(10, model), shape);
  EXPECT_EQ(ParseError(whole.substr(0, whole.size() / 2), shape), "integrity failure: c: checksum mismatch");
  EXPECT_EQ(ParseError(whole.substr(0, 103), shape), "integrity failure: c: truncated (103 bytes)");
  EXPECT_EQ(ParseError(Forged([](std::string* b) { Poke<uint64_t>(b, kReservedAt, 5); })),
            "invalid input: c: header field reserved is 5, expected 0");
}

TEST(Checkpoint, PositionMustBeInTheRun) {
  EXPECT_EQ(ParseError(Forged([](std::string* b) { Poke<int32_t>(b, kEpochAt, -1); })),
            "invalid input: c: header field epoch is -1, expected 0 or more");
  EXPECT_EQ(ParseError(Forged([](std::string* b) { Poke<int32_t>(b, kStepInEpochAt, 937); })),
            "invalid input: c: header field step_in_epoch is 937, expected 0 to 936 (937 steps per epoch)");
  EXPECT_EQ(ParseError(Forged([](std::string* b) { Poke<int32_t>(b, kStepInEpochAt, -3); })),
            "invalid input: c: header field step_in_epoch is -3, expected 0 to 936 (937 steps per epoch)");
  EXPECT_EQ(ParseError(Forged([](std::string* b) { Poke<int64_t>(b, kStepAt, int64_t{1} << 62); }, Make(1881))),
            "invalid input: c: header field step is 4611686018427387904, expected 1881 (epoch 2 x 937 steps + "
            "step_in_epoch 7)");
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

// Every kind of candidate that cannot be read as a checkpoint gets one rule: skipped with
// its reason, and the previous good one restored. A folder named like the newest once
// stopped the trainer (exit 2) where a truncated file fell back; a FIFO once hung it in
// open() (it is opened without waiting).
class UnusableNewest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir("trainer_ckpt_unusable");
    ASSERT_TRUE(WriteCheckpoint(dir_, Make(10), kShape, 3).ok());
    newest_ = CheckpointPath(dir_, 20);
  }
  // The newest (step 20) is skipped with `why` and step 10 restored.
  void ExpectSkipped(const std::string& why) {
    auto r = RestoreLatest(dir_, kShape, 42);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->state.step, 10);
    EXPECT_EQ(r->path, CheckpointPath(dir_, 10));
    ASSERT_EQ(r->skipped.size(), 1u);
    EXPECT_EQ(r->skipped[0], newest_ + ": " + why);
  }
  std::string dir_, newest_;
};

const std::string kRefused = "; refused (only regular files inside it are read)";

TEST_F(UnusableNewest, Folder) {
  ASSERT_TRUE(std::filesystem::create_directory(newest_));
  ExpectSkipped("is a folder" + kRefused);
}

TEST_F(UnusableNewest, Fifo) {
  ASSERT_EQ(::mkfifo(newest_.c_str(), 0600), 0);
  ExpectSkipped("is a FIFO" + kRefused);
}

// Even to a good checkpoint: what the folder holds is read, not what a link points at.
TEST_F(UnusableNewest, Symlink) {
  std::filesystem::create_symlink(CheckpointPath(dir_, 10), newest_);
  ExpectSkipped("is a symlink" + kRefused);
}

TEST_F(UnusableNewest, Device) {
  if (::mknod(newest_.c_str(), S_IFCHR | 0600, ::makedev(1, 3)) != 0) GTEST_SKIP() << "mknod needs CAP_MKNOD";
  ExpectSkipped("is a device" + kRefused);
}

TEST_F(UnusableNewest, Truncated) {
  ASSERT_TRUE(WriteFileAtomic(newest_, SerializeCheckpoint(Make(20), kShape).substr(0, 60)).ok());
  ExpectSkipped("truncated (60 bytes)");
}

TEST_F(UnusableNewest, BadChecksum) {
  std::string bytes = SerializeCheckpoint(Make(20), kShape);
  bytes[90] ^= 1;
  ASSERT_TRUE(WriteFileAtomic(newest_, bytes).ok());
  ExpectSkipped("checksum mismatch");
}

TEST_F(UnusableNewest, Unreadable) {
  ASSERT_TRUE(WriteFileAtomic(newest_, SerializeCheckpoint(Make(20), kShape)).ok());
  ASSERT_EQ(::chmod(newest_.c_str(), 0), 0);
  if (::access(newest_.c_str(), R_OK) == 0) GTEST_SKIP() << "root reads a file of mode 0";
  auto r = RestoreLatest(dir_, kShape, 42);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->state.step, 10);
  EXPECT_EQ(r->skipped, std::vector<std::string>{"opening " + newest_ + ": Permission denied"});
}

// A FIFO is skipped at once, not waited on: the run goes on from the previous checkpoint.
TEST_F(UnusableNewest, FifoDoesNotWait) {
  ASSERT_EQ(::mkfifo(newest_.c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  auto r = RestoreLatest(dir_, kShape, 42);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  ASSERT_TRUE(r.ok());
}

// Several unusable ones, newest first, each listed; all of them unusable is an error.
TEST_F(UnusableNewest, EveryKindAtOnceThenNothingLeft) {
  ASSERT_TRUE(std::filesystem::create_directory(newest_));
  ASSERT_EQ(::mkfifo(CheckpointPath(dir_, 30).c_str(), 0600), 0);
  std::filesystem::create_symlink("/nonexistent", CheckpointPath(dir_, 40));
  auto r = RestoreLatest(dir_, kShape, 42);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state.step, 10);
  EXPECT_EQ(r->skipped, (std::vector<std::string>{CheckpointPath(dir_, 40) + ": is a symlink" + kRefused,
                                                  CheckpointPath(dir_, 30) + ": is a FIFO" + kRefused,
                                                  newest_ + ": is a folder" + kRefused}));
  std::filesystem::resize_file(CheckpointPath(dir_, 10), 100);
  r = RestoreLatest(dir_, kShape, 42);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kIntegrity);
  EXPECT_NE(r.error().message.find(CheckpointPath(dir_, 10) + ": truncated (100 bytes)"), std::string::npos)
      << r.error().message;
}

// A forged newest checkpoint is refused, not skipped for an older one.
TEST(Checkpoint, ForgedNewestIsAnError) {
  std::string dir = FreshDir("trainer_ckpt_forged");
  ASSERT_TRUE(WriteCheckpoint(dir, Make(10), kShape, 3).ok());
  ASSERT_TRUE(WriteFileAtomic(CheckpointPath(dir, 20), SerializeCheckpoint(Make(20, 10), kShape)).ok());
  auto r = RestoreLatest(dir, kShape, 42);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(r.error().message, CheckpointPath(dir, 20) +
                                   ": header field param_count is 10, expected 3 (this model's "
                                   "parameter count)");
}

// Only damaged checkpoints: an error naming them, not a fresh start over them.
TEST(Checkpoint, OnlyDamagedCheckpointsIsAnError) {
  std::string dir = FreshDir("trainer_ckpt_damaged");
  ASSERT_TRUE(WriteCheckpoint(dir, Make(10), kShape, 3).ok());
  std::filesystem::resize_file(CheckpointPath(dir, 10), 60);
  auto r = RestoreLatest(dir, kShape, 42);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kIntegrity);
  EXPECT_EQ(r.error().message, dir + ": no usable checkpoint (" + CheckpointPath(dir, 10) +
                                   ": truncated (60 bytes)); move these files away to start afresh");
}

TEST(Checkpoint, EmptyOrMissingDirIsAFreshStart) {
  std::string dir = FreshDir("trainer_ckpt_none");
  for (const std::string& d : {dir, dir + "/missing"}) {
    auto r = RestoreLatest(d, kShape, 42);
    ASSERT_TRUE(r.ok()) << d;
    EXPECT_TRUE(r->path.empty()) << d;
  }
}

}  // namespace
}  // namespace trainer
