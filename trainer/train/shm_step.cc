#include "train/shm_step.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace trainer {
namespace {

// Parameters from b1 on (b1, W2, b2): one task updates them.
constexpr int kRest = static_cast<int>(MlpLayout::kCount - MlpLayout::kB1);
// W1 rows per task, as TrainStep: 16 rows of dW1 (8 KB) stay in L1 for Adam.
constexpr int kTaskRows = 16;
constexpr int kRowTasks = (MlpLayout::kIn + kTaskRows - 1) / kTaskRows;

size_t Floats16(size_t n) { return (n + 15) / 16 * 16; }  // each array on its own 64 bytes

size_t StrideOf(const StepShape& shape) {
  const size_t rest_offset = static_cast<size_t>(shape.global_batch / shape.shards) * MlpLayout::kHidden;
  return Floats16(rest_offset + kRest + 1);  // TrainStep's block: dh1, the small gradients, the loss
}

}  // namespace

size_t ShmStep::RegionBytes(const StepShape& shape) {
  return (3 * Floats16(MlpLayout::kCount) + static_cast<size_t>(shape.shards) * StrideOf(shape) + 16) * sizeof(float);
}

ShmStep::ShmStep(SharedWork& shared, const Split& train, StepShape shape, uint64_t seed, const cpu::AdamConfig& adam,
                 ThreadPool& pool)
    : shared_(shared), train_(train), shape_(shape), seed_(seed), adam_(adam), pool_(pool) {
  shard_size_ = shape.global_batch / shape.shards;
  rest_offset_ = static_cast<size_t>(shard_size_) * MlpLayout::kHidden;
  stride_ = StrideOf(shape);
  auto* f = reinterpret_cast<float*>(shared.region());            // (RegionBytes / 4)
  params_ = f;                                                    // (kCount)
  adam_m_ = params_ + Floats16(MlpLayout::kCount);                // (kCount)
  adam_v_ = adam_m_ + Floats16(MlpLayout::kCount);                // (kCount)
  blocks_ = adam_v_ + Floats16(MlpLayout::kCount);                // (S, stride)
  loss_ = blocks_ + static_cast<size_t>(shape.shards) * stride_;  // (1): the summed loss of the last step
  const size_t S = static_cast<size_t>(shape.shards), n = static_cast<size_t>(shard_size_);
  rest_.resize(S * (kRest + 1));
  in_rows_.resize(static_cast<size_t>(shape.global_batch));
  x_.resize(S * n * MlpLayout::kIn);
  mask_.resize(S * n * MlpLayout::kHidden);
  y_.resize(S * n);
  for (size_t s = 0; s < S; ++s) ws_.push_back(std::make_unique<MlpWorkspace<float>>(shard_size_));
}

void ShmStep::ClaimAll(const std::function<void(int task)>& run) {
  pool_.ParallelFor(pool_.size(), [&](int) {
    for (int task = shared_.Claim(); task >= 0; task = shared_.Claim()) {
      run(task);
      shared_.Done();
    }
  });
}

Status ShmStep::Run(float* params, float* adam_m, float* adam_v, const std::vector<int32_t>& perm, int epoch, int step,
                    int64_t t, double* loss) {
  const int B = shape_.global_batch, S = shape_.shards, H = MlpLayout::kHidden;
  const size_t batch0 = static_cast<size_t>(step) * B;
  if (!loaded_) {  // every rank holds the same state here (seeded or restored): one of them copies it in
    TRAINER_TRY(shared_.BeginRound(1));
    ClaimAll([&](int) {
      const size_t bytes = MlpLayout::kCount * sizeof(float);
      std::memcpy(params_, params, bytes);
      std::memcpy(adam_m_, adam_m, bytes);
      std::memcpy(adam_v_, adam_v, bytes);
    });
    TRAINER_TRY(shared_.EndRound());
    loaded_ = true;
  }
  auto mark = std::chrono::steady_clock::now();

  // Round 1: the shards up to dh1, each into its block (TrainStep step 1, any rank).
  TRAINER_TRY(shared_.BeginRound(S));
  Lap(&mark, &phases_.exchange_s);
  const double scale = 1.0 / B;  // mean over the global batch
  ClaimAll([&](int s) {
    const size_t n = static_cast<size_t>(shard_size_), at = static_cast<size_t>(s);
    ShardScratch scratch{x_.data() + at * n * MlpLayout::kIn, y_.data() + at * n, mask_.data() + at * n * H,
                         ws_[at].get()};
    ComputeShard(params_, train_, perm, batch0, s, shard_size_, seed_, epoch, step, scale, scratch,
                 blocks_ + at * stride_, rest_offset_);
  });
  Lap(&mark, &phases_.compute_s);
  TRAINER_TRY(shared_.EndRound());
  for (int j = 0; j < B; ++j) {
    in_rows_[static_cast<size_t>(j)] = &train_.images[static_cast<size_t>(perm[batch0 + j]) * MlpLayout::kIn];
  }
  Lap(&mark, &phases_.exchange_s);

  // Round 2: dW1 and Adam by row tasks, and one task for b1, W2, b2 (TrainStep steps 3-5).
  TRAINER_TRY(shared_.BeginRound(kRowTasks + 1));
  Lap(&mark, &phases_.gather_s);
  ClaimAll([&](int task) {
    if (task == kRowTasks) {
      const size_t n = kRest + 1;  // the small gradients and the loss of each shard
      for (int s = 0; s < S; ++s) {
        std::memcpy(rest_.data() + s * n, blocks_ + static_cast<size_t>(s) * stride_ + rest_offset_, n * sizeof(float));
      }
      // TreeSum's pairwise tree, on this thread (the pool is busy running this task).
      for (int width = 1; width < S; width *= 2) {
        for (int s = 0; s + width < S; s += 2 * width) {
          cpu::add_inplace(rest_.data() + s * n, rest_.data() + (s + width) * n, n);
        }
      }
      cpu::adam_update(params_ + MlpLayout::kB1, rest_.data(), adam_m_ + MlpLayout::kB1, adam_v_ + MlpLayout::kB1,
                       kRest, adam_, t);
      *loss_ = rest_[kRest];
      return;
    }
    const int lo = task * kTaskRows, hi = std::min(lo + kTaskRows, MlpLayout::kIn);
    UpdateW1Rows(params_, adam_m_, adam_v_, in_rows_.data(), blocks_, stride_, S, shard_size_, lo, hi, adam_, t);
  });
  Lap(&mark, &phases_.update_s);
  TRAINER_TRY(shared_.EndRound());
  if (loss != nullptr) *loss = static_cast<double>(*loss_) / B;
  Lap(&mark, &phases_.gather_s);
  ++phases_.steps;
  return Status::Ok();
}

Status ShmStep::Sync(float* params, float* adam_m, float* adam_v, bool moments) {
  if (!loaded_) return Status::Ok();  // the host buffers are the state until the first step
  const size_t bytes = MlpLayout::kCount * sizeof(float);
  std::memcpy(params, params_, bytes);
  if (moments) {
    std::memcpy(adam_m, adam_m_, bytes);
    std::memcpy(adam_v, adam_v_, bytes);
  }
  return Status::Ok();
}

}  // namespace trainer
