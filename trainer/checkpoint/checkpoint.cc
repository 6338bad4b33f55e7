#include "checkpoint/checkpoint.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/sha256.h"
#include "fs/safe_open.h"

namespace trainer {
namespace {

static_assert(std::endian::native == std::endian::little, "checkpoints are little-endian; add byte swaps");

constexpr char kMagic[8] = {'T', 'R', 'N', 'C', 'K', 'P', 'T', '1'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kHeaderBytes = 56;
constexpr size_t kPrefixBytes = sizeof(kMagic) + 8;  // magic, version, header_bytes
constexpr size_t kSumBytes = 32;

template <typename V>
void Put(std::string* out, V v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

template <typename V>
V Take(const char*& p) {
  V v;
  std::memcpy(&v, p, sizeof(v));
  p += sizeof(v);
  return v;
}

Error Corrupt(const std::string& name, const std::string& why) {
  return MakeError(ErrorKind::kIntegrity, name + ": " + why);
}

// A file that checks out but does not fit this run: the field, its value, what was expected.
Error Unfit(const std::string& name, const std::string& field, const std::string& value, const std::string& want) {
  return MakeError(ErrorKind::kInvalidInput, name + ": header field " + field + " is " + value + ", expected " + want);
}

// The header after magic, version and header_bytes, as written.
struct Header {
  int64_t step = 0;
  int32_t epoch = 0, step_in_epoch = 0;
  uint64_t seed = 0;
  RunShape shape;
  uint64_t reserved = 0;
};

Header TakeHeader(const char* p) {
  Header h;
  h.step = Take<int64_t>(p);
  h.epoch = Take<int32_t>(p);
  h.step_in_epoch = Take<int32_t>(p);
  h.seed = Take<uint64_t>(p);
  h.shape.global_batch = Take<int32_t>(p);
  h.shape.shards = Take<int32_t>(p);
  h.shape.train_count = Take<int32_t>(p);
  h.shape.lr = std::bit_cast<float>(Take<uint32_t>(p));
  h.shape.param_count = Take<uint64_t>(p);
  h.reserved = Take<uint64_t>(p);
  return h;
}

// The run that wrote it against this one: another shape means another run's checkpoint.
Status CheckShape(const RunShape& got, const RunShape& want, const std::string& name) {
  auto mismatch = [&](const char* flag, const std::string& a, const std::string& b) {
    return MakeError(ErrorKind::kInvalidInput, name + ": written by a run with " + flag + " " + a + ", this run has " +
                                                   b + " (use a fresh --checkpoint-dir)");
  };
  if (got.global_batch != want.global_batch) {
    return mismatch("--global-batch", std::to_string(got.global_batch), std::to_string(want.global_batch));
  }
  if (got.shards != want.shards) return mismatch("--shards", std::to_string(got.shards), std::to_string(want.shards));
  if (got.train_count != want.train_count) {
    return mismatch("training examples", std::to_string(got.train_count), std::to_string(want.train_count));
  }
  if (std::bit_cast<uint32_t>(got.lr) != std::bit_cast<uint32_t>(want.lr)) {
    return mismatch("--lr", std::to_string(got.lr), std::to_string(want.lr));
  }
  return Status::Ok();
}

// Where the run stands must be a place in this run's epochs: the step counter is the
// position (epoch, step_in_epoch) counted in steps.
Status CheckPosition(const Header& h, const RunShape& want, const std::string& name) {
  const int64_t per_epoch = want.global_batch > 0 ? want.train_count / want.global_batch : 0;
  if (per_epoch <= 0) return MakeError(ErrorKind::kInvalidInput, name + ": this run has no steps in an epoch");
  if (h.epoch < 0) return Unfit(name, "epoch", std::to_string(h.epoch), "0 or more");
  if (h.step_in_epoch < 0 || h.step_in_epoch >= per_epoch) {
    return Unfit(name, "step_in_epoch", std::to_string(h.step_in_epoch),
                 "0 to " + std::to_string(per_epoch - 1) + " (" + std::to_string(per_epoch) + " steps per epoch)");
  }
  const int64_t step = h.epoch * per_epoch + h.step_in_epoch;
  if (h.step != step) {
    return Unfit(name, "step", std::to_string(h.step),
                 std::to_string(step) + " (epoch " + std::to_string(h.epoch) + " x " + std::to_string(per_epoch) +
                     " steps + step_in_epoch " + std::to_string(h.step_in_epoch) + ")");
  }
  return Status::Ok();
}

// Every field against this run and the file's real size, before any of them sizes,
// offsets or indexes anything.
Status CheckHeader(const Header& h, const RunShape& want, size_t file_bytes, const std::string& name) {
  if (h.shape.param_count != want.param_count) {
    return Unfit(name, "param_count", std::to_string(h.shape.param_count),
                 std::to_string(want.param_count) + " (this model's parameter count)");
  }
  if (file_bytes != CheckpointBytes(want.param_count)) {
    return MakeError(ErrorKind::kInvalidInput, name + ": " + std::to_string(file_bytes) + " bytes, expected " +
                                                   std::to_string(CheckpointBytes(want.param_count)) + " for " +
                                                   std::to_string(want.param_count) + " parameters");
  }
  if (h.reserved != 0) return Unfit(name, "reserved", std::to_string(h.reserved), "0");
  TRAINER_TRY(CheckShape(h.shape, want, name));
  return CheckPosition(h, want, name);
}

// Steps of the ckpt-*.bin files in dir, newest first.
std::vector<int64_t> ListSteps(const std::string& dir) {
  std::vector<int64_t> steps;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string f = e.path().filename().string();
    if (f.size() == 19 && f.rfind("ckpt-", 0) == 0 && f.substr(15) == ".bin" &&
        f.find_first_not_of("0123456789", 5) == 15) {
      steps.push_back(std::stoll(f.substr(5, 10)));
    }
  }
  std::sort(steps.rbegin(), steps.rend());
  return steps;
}

// Checkpoints are ~1.2 MB; anything near this is not one.
constexpr uint64_t kMaxCheckpointBytes = 256u << 20;

// The bytes of candidate `step`, read without following it: a folder, a FIFO (the open
// never waits), a symlink, a device or a socket named like a checkpoint is refused by
// the open itself (imgtool/fs/safe_open.h), as is one that cannot be read.
Result<std::string> ReadCandidate(const std::string& dir, int64_t step) {
  std::string path = CheckpointPath(dir, step);
  return imgtool::fs::ReadRegularBeneath(dir, path.substr(dir.size() + 1), kMaxCheckpointBytes);
}

}  // namespace

std::string CheckpointPath(const std::string& dir, int64_t step) {
  char name[32];
  std::snprintf(name, sizeof(name), "ckpt-%010lld.bin", static_cast<long long>(step));
  return dir + "/" + name;
}

uint64_t CheckpointBytes(uint64_t param_count) {
  return kPrefixBytes + kHeaderBytes + 3 * param_count * sizeof(float) + kSumBytes;
}

std::string SerializeCheckpoint(const TrainState& s, const RunShape& shape) {
  std::string out;
  size_t n = s.params.size();
  out.reserve(CheckpointBytes(n));
  out.append(kMagic, sizeof(kMagic));
  Put<uint32_t>(&out, kVersion);
  Put<uint32_t>(&out, kHeaderBytes);
  Put<int64_t>(&out, s.step);
  Put<int32_t>(&out, s.epoch);
  Put<int32_t>(&out, s.step_in_epoch);
  Put<uint64_t>(&out, s.seed);
  Put<int32_t>(&out, shape.global_batch);
  Put<int32_t>(&out, shape.shards);
  Put<int32_t>(&out, shape.train_count);
  Put<uint32_t>(&out, std::bit_cast<uint32_t>(shape.lr));
  Put<uint64_t>(&out, n);
  Put<uint64_t>(&out, 0);
  for (const auto* v : {&s.params, &s.adam_m, &s.adam_v}) {
    out.append(reinterpret_cast<const char*>(v->data()), n * sizeof(float));
  }
  Sha256Bytes sum = Sha256(out.data(), out.size());
  out.append(reinterpret_cast<const char*>(sum.data()), sum.size());
  return out;
}

Result<TrainState> ParseCheckpoint(const std::string& bytes, const RunShape& shape, const std::string& name) {
  if (bytes.size() < kPrefixBytes + kHeaderBytes + kSumBytes) {
    return Corrupt(name, "truncated (" + std::to_string(bytes.size()) + " bytes)");
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) return Corrupt(name, "not a trainer checkpoint");
  Sha256Bytes sum = Sha256(bytes.data(), bytes.size() - kSumBytes);
  if (std::memcmp(sum.data(), bytes.data() + bytes.size() - kSumBytes, kSumBytes) != 0) {
    return Corrupt(name, "checksum mismatch");
  }
  const char* p = bytes.data() + sizeof(kMagic);
  uint32_t version = Take<uint32_t>(p);
  if (version != kVersion) return Corrupt(name, "unsupported checkpoint version " + std::to_string(version));
  uint32_t header_bytes = Take<uint32_t>(p);
  if (header_bytes != kHeaderBytes) {
    return Unfit(name, "header_bytes", std::to_string(header_bytes), std::to_string(kHeaderBytes));
  }
  Header h = TakeHeader(p);
  TRAINER_TRY(CheckHeader(h, shape, bytes.size(), name));
  p += kHeaderBytes;
  // Sized by the model's count, which the header was just found to match, and the file
  // was found to hold exactly that many.
  TrainState s;
  s.step = h.step;
  s.epoch = h.epoch;
  s.step_in_epoch = h.step_in_epoch;
  s.seed = h.seed;
  for (auto* v : {&s.params, &s.adam_m, &s.adam_v}) {
    v->resize(shape.param_count);
    // An empty vector's data() may be null, and memcpy's arguments must never be.
    if (shape.param_count > 0) std::memcpy(v->data(), p, shape.param_count * sizeof(float));
    p += shape.param_count * sizeof(float);
  }
  return s;
}

Status WriteCheckpoint(const std::string& dir, const TrainState& s, const RunShape& shape, int keep) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return MakeError(ErrorKind::kInternal, "creating " + dir + ": " + ec.message());
  TRAINER_TRY(WriteFileAtomic(CheckpointPath(dir, s.step), SerializeCheckpoint(s, shape)));
  std::vector<int64_t> steps = ListSteps(dir);
  for (size_t i = static_cast<size_t>(keep); i < steps.size(); ++i) {
    std::filesystem::remove(CheckpointPath(dir, steps[i]), ec);  // best effort
  }
  return Status::Ok();
}

// One rule for every candidate that cannot be read as a checkpoint (not a regular file,
// unreadable, truncated, a checksum that fails): it is skipped, with its reason, for the
// previous one. A file that reads as a checkpoint but not of this run is an error.
Result<Restored> RestoreLatest(const std::string& dir, const RunShape& shape, uint64_t seed) {
  Restored r;
  for (int64_t step : ListSteps(dir)) {
    std::string path = CheckpointPath(dir, step);
    auto bytes = ReadCandidate(dir, step);
    if (!bytes.ok()) {
      if (bytes.error().kind != ErrorKind::kNotFound) r.skipped.push_back(bytes.error().message);
      continue;  // not found: pruned by a writer since the listing
    }
    auto st = ParseCheckpoint(*bytes, shape, path);
    if (!st.ok()) {
      if (st.error().kind != ErrorKind::kIntegrity) return st.error();
      r.skipped.push_back(st.error().message);
      continue;
    }
    if (st->seed != seed) {
      return MakeError(ErrorKind::kInvalidInput, path + ": written by a run with --seed " + std::to_string(st->seed) +
                                                     ", this run has --seed " + std::to_string(seed) +
                                                     " (use a fresh --checkpoint-dir)");
    }
    if (st->step != step) {
      r.skipped.push_back(path + ": holds step " + std::to_string(st->step) + ", not the step in its name");
      continue;
    }
    r.state = std::move(*st);
    r.path = path;
    return r;
  }
  if (r.skipped.empty()) return r;  // no checkpoint yet: a fresh start (path empty)
  std::string why;
  for (const auto& s : r.skipped) why += (why.empty() ? "" : "; ") + s;
  return MakeError(ErrorKind::kIntegrity,
                   dir + ": no usable checkpoint (" + why + "); move these files away to start afresh");
}

}  // namespace trainer
