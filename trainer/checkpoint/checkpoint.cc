#include "checkpoint/checkpoint.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/sha256.h"

namespace trainer {
namespace {

static_assert(std::endian::native == std::endian::little, "checkpoints are little-endian; add byte swaps");

constexpr char kMagic[8] = {'T', 'R', 'N', 'C', 'K', 'P', 'T', '1'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kHeaderBytes = 56;

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

}  // namespace

std::string CheckpointPath(const std::string& dir, int64_t step) {
  char name[32];
  std::snprintf(name, sizeof(name), "ckpt-%010lld.bin", static_cast<long long>(step));
  return dir + "/" + name;
}

std::string SerializeCheckpoint(const TrainState& s, const RunShape& shape) {
  std::string out;
  size_t n = s.params.size();
  out.reserve(16 + kHeaderBytes + 3 * n * sizeof(float) + 32);
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
  if (bytes.size() < 16 + kHeaderBytes + 32) return Corrupt(name, "truncated (" + std::to_string(bytes.size()) + " bytes)");
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) return Corrupt(name, "not a trainer checkpoint");
  Sha256Bytes sum = Sha256(bytes.data(), bytes.size() - 32);
  if (std::memcmp(sum.data(), bytes.data() + bytes.size() - 32, 32) != 0) return Corrupt(name, "checksum mismatch");
  const char* p = bytes.data() + sizeof(kMagic);
  uint32_t version = Take<uint32_t>(p);
  uint32_t header = Take<uint32_t>(p);
  if (version != kVersion || header != kHeaderBytes) {
    return Corrupt(name, "unsupported checkpoint version " + std::to_string(version));
  }
  TrainState s;
  s.step = Take<int64_t>(p);
  s.epoch = Take<int32_t>(p);
  s.step_in_epoch = Take<int32_t>(p);
  s.seed = Take<uint64_t>(p);
  RunShape got;
  got.global_batch = Take<int32_t>(p);
  got.shards = Take<int32_t>(p);
  got.train_count = Take<int32_t>(p);
  got.lr = std::bit_cast<float>(Take<uint32_t>(p));
  uint64_t n = Take<uint64_t>(p);
  Take<uint64_t>(p);
  // n is the file's word: divide instead of multiplying it (3 * n * 4 wraps around for n
  // near 2^62, and a length check passed by a wrapped product let resize() ask for
  // exabytes).
  const uint64_t payload = bytes.size() - (16 + kHeaderBytes + 32);
  if (payload % (3 * sizeof(float)) != 0 || n != payload / (3 * sizeof(float))) {
    return Corrupt(name, "length does not match its header");
  }
  auto mismatch = [&](const char* flag, const std::string& a, const std::string& b) {
    return MakeError(ErrorKind::kInvalidInput, name + ": written by a run with " + flag + " " + a +
                                                   ", this run has " + b + " (use a fresh --checkpoint-dir)");
  };
  if (got.global_batch != shape.global_batch) {
    return mismatch("--global-batch", std::to_string(got.global_batch), std::to_string(shape.global_batch));
  }
  if (got.shards != shape.shards) return mismatch("--shards", std::to_string(got.shards), std::to_string(shape.shards));
  if (got.train_count != shape.train_count) {
    return mismatch("training examples", std::to_string(got.train_count), std::to_string(shape.train_count));
  }
  if (std::bit_cast<uint32_t>(got.lr) != std::bit_cast<uint32_t>(shape.lr)) {
    return mismatch("--lr", std::to_string(got.lr), std::to_string(shape.lr));
  }
  if (shape.param_count != 0 && n != shape.param_count) {
    return mismatch("a model of", std::to_string(n) + " parameters", std::to_string(shape.param_count));
  }
  for (auto* v : {&s.params, &s.adam_m, &s.adam_v}) {
    v->resize(n);
    // An empty vector's data() may be null, and memcpy's arguments must never be.
    if (n > 0) std::memcpy(v->data(), p, n * sizeof(float));
    p += n * sizeof(float);
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

Result<Restored> RestoreLatest(const std::string& dir, const RunShape& shape, uint64_t seed) {
  Restored r;
  for (int64_t step : ListSteps(dir)) {
    std::string path = CheckpointPath(dir, step);
    auto bytes = ReadFile(path);
    if (!bytes.ok()) {
      r.skipped.push_back(bytes.error().message);
      continue;
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
  return r;  // nothing usable: a fresh start (path empty)
}

}  // namespace trainer
