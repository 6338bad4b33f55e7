#include "train/step.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "cpu/ops.h"

namespace trainer {
namespace {

bool PowerOfTwo(int v) { return v > 0 && (v & (v - 1)) == 0; }

// Parameters from b1 on (b1, W2, b2): updated by every rank.
constexpr int kRest = static_cast<int>(MlpLayout::kCount - MlpLayout::kB1);
// W1 rows per thread task: 16 rows of dW1 (8 KB) stay in L1 for Adam.
constexpr int kTaskRows = 16;

}  // namespace

Status ValidateStepShape(const StepShape& shape, int world_size) {
  auto bad = [](const std::string& m) { return MakeError(ErrorKind::kInvalidInput, m); };
  if (!PowerOfTwo(shape.shards)) return bad("--shards " + std::to_string(shape.shards) + " must be a power of two");
  if (shape.global_batch < shape.shards || shape.global_batch % shape.shards != 0) {
    return bad("--global-batch " + std::to_string(shape.global_batch) + " must be a multiple of --shards " +
               std::to_string(shape.shards));
  }
  if (world_size > shape.shards || shape.shards % world_size != 0) {
    return bad("world size " + std::to_string(world_size) + " must divide --shards " + std::to_string(shape.shards) +
               " (1, 2, 4, ... up to the shard count)");
  }
  return Status::Ok();
}

void Lap(std::chrono::steady_clock::time_point* mark, double* total) {
  auto now = std::chrono::steady_clock::now();
  *total += std::chrono::duration<double>(now - *mark).count();
  *mark = now;
}

void TreeSum(float* blocks, int count, size_t stride, size_t n, ThreadPool& pool) {
  if (count <= 1) return;
  // Elementwise, so each slice of elements can run every level on its own; slices of 2048
  // elements keep all `count` blocks of a slice in L2 while the levels run.
  const int chunks = static_cast<int>((n + 2047) / 2048);
  pool.ParallelFor(chunks, [&](int c) {
    size_t lo = n * static_cast<size_t>(c) / chunks, hi = n * static_cast<size_t>(c + 1) / chunks;
    for (int width = 1; width < count; width *= 2) {
      for (int s = 0; s + width < count; s += 2 * width) {
        float* dst = blocks + static_cast<size_t>(s) * stride;
        const float* src = blocks + static_cast<size_t>(s + width) * stride;
        cpu::add_inplace(dst + lo, src + lo, hi - lo);
      }
    }
  });
}

void ComputeShard(const float* params, const Split& train, const std::vector<int32_t>& perm, size_t batch0, int shard,
                  int n, uint64_t seed, int epoch, int step, double scale, const ShardScratch& scratch, float* block,
                  size_t rest_offset) {
  const int first = shard * n;  // position of the shard in the global batch
  for (int i = 0; i < n; ++i) {
    size_t ex = static_cast<size_t>(perm[batch0 + first + i]);
    std::memcpy(scratch.x + static_cast<size_t>(i) * MlpLayout::kIn, &train.images[ex * MlpLayout::kIn],
                MlpLayout::kIn * sizeof(float));
    scratch.y[i] = train.labels[ex];
  }
  cpu::dropout_mask(scratch.mask, n, MlpLayout::kHidden, kDropoutRate, seed, epoch, step, first);
  double shard_loss = ShardGradientExceptW1(params, scratch.x, scratch.y, n, scratch.mask, scale, block,
                                            block + rest_offset, *scratch.ws);
  block[rest_offset + kRest] = static_cast<float>(shard_loss);
}

void UpdateW1Rows(float* params, float* adam_m, float* adam_v, const float* const* in_rows, const float* blocks,
                  size_t stride, int shards, int shard_size, int lo, int hi, const cpu::AdamConfig& adam, int64_t t) {
  const int H = MlpLayout::kHidden;
  float dw[kTaskRows * MlpLayout::kHidden];  // (hi - lo, 128)
  cpu::linear_weight_grad_tree(dw, in_rows, blocks, stride, shards, shard_size, lo, hi, H);
  const size_t at = MlpLayout::kW1 + static_cast<size_t>(lo) * H;
  cpu::adam_update(params + at, dw, adam_m + at, adam_v + at, (hi - lo) * H, adam, t);
}

RowSlice OwnedRows(int rank, int world) {
  const int per = (MlpLayout::kIn + world - 1) / world;
  const int begin = std::min(rank * per, MlpLayout::kIn);
  return {begin, std::min(begin + per, MlpLayout::kIn)};
}

TrainStep::TrainStep(const Split& train, StepShape shape, uint64_t seed, const cpu::AdamConfig& adam, Comm& comm,
                     ThreadPool& pool)
    : train_(train), shape_(shape), seed_(seed), adam_(adam), comm_(comm), pool_(pool) {
  shard_size_ = shape.global_batch / shape.shards;
  local_shards_ = shape.shards / comm.size();
  first_shard_ = comm.rank() * local_shards_;
  rows_ = OwnedRows(comm.rank(), comm.size());
  slice_rows_ = (MlpLayout::kIn + comm.size() - 1) / comm.size();
  rest_offset_ = static_cast<size_t>(shard_size_) * MlpLayout::kHidden;
  stride_ = (rest_offset_ + kRest + 1 + 15) / 16 * 16;
  shards_.resize(static_cast<size_t>(shape.shards) * stride_);
  in_rows_.resize(static_cast<size_t>(shape.global_batch));
  if (slice_rows_ * comm.size() != MlpLayout::kIn) {
    padded_.resize(static_cast<size_t>(comm.size()) * slice_rows_ * MlpLayout::kHidden);
  }
  x_.resize(static_cast<size_t>(local_shards_) * shard_size_ * MlpLayout::kIn);
  y_.resize(static_cast<size_t>(local_shards_) * shard_size_);
  mask_.resize(static_cast<size_t>(local_shards_) * shard_size_ * MlpLayout::kHidden);
  for (int s = 0; s < local_shards_; ++s) ws_.push_back(std::make_unique<MlpWorkspace<float>>(shard_size_));
}

Status TrainStep::Run(float* params, float* adam_m, float* adam_v, const std::vector<int32_t>& perm, int epoch,
                      int step, int64_t t, double* loss) {
  const int B = shape_.global_batch, S = shape_.shards, H = MlpLayout::kHidden;
  const double scale = 1.0 / B;  // mean over the global batch
  const size_t batch0 = static_cast<size_t>(step) * B;

  auto mark = std::chrono::steady_clock::now();
  // 1. This rank's shards, up to dh1, into their blocks of shards_.
  pool_.ParallelFor(local_shards_, [&](int ls) {
    const int shard = first_shard_ + ls;
    const size_t n = static_cast<size_t>(shard_size_), at = static_cast<size_t>(ls);
    ShardScratch scratch{x_.data() + at * n * MlpLayout::kIn, y_.data() + at * n, mask_.data() + at * n * H,
                         ws_[at].get()};
    ComputeShard(params, train_, perm, batch0, shard, shard_size_, seed_, epoch, step, scale, scratch,
                 shards_.data() + static_cast<size_t>(shard) * stride_, rest_offset_);
  });

  // 2. Every rank gets every shard's block (this rank's are already in their slots).
  const size_t local_floats = static_cast<size_t>(local_shards_) * stride_;
  Lap(&mark, &phases_.compute_s);
  TRAINER_TRY(comm_.AllGather(shards_.data() + comm_.rank() * local_floats, shards_.data(), local_floats));
  Lap(&mark, &phases_.exchange_s);

  // 3. The small gradients and the loss, summed into shard 0's block.
  float* rest = shards_.data() + rest_offset_;  // (kRest + 1): grads of b1, W2, b2, then the loss sum
  TreeSum(rest, S, stride_, kRest + 1, pool_);

  // 4 and 5. This rank's rows of dW1 over all shards, and Adam on them while they are in L1.
  for (int j = 0; j < B; ++j) {
    in_rows_[static_cast<size_t>(j)] = &train_.images[static_cast<size_t>(perm[batch0 + j]) * MlpLayout::kIn];
  }
  const int tasks = (rows_.end - rows_.begin + kTaskRows - 1) / kTaskRows;
  pool_.ParallelFor(tasks, [&](int task) {
    const int lo = rows_.begin + task * kTaskRows, hi = std::min(lo + kTaskRows, rows_.end);
    UpdateW1Rows(params, adam_m, adam_v, in_rows_.data(), shards_.data(), stride_, S, shard_size_, lo, hi, adam_, t);
  });
  cpu::adam_update(params + MlpLayout::kB1, rest, adam_m + MlpLayout::kB1, adam_v + MlpLayout::kB1, kRest, adam_, t);
  *loss = static_cast<double>(rest[kRest]) / B;
  Lap(&mark, &phases_.update_s);
  TRAINER_TRY(GatherRows(params));
  Lap(&mark, &phases_.gather_s);
  ++phases_.steps;
  return Status::Ok();
}

Status TrainStep::GatherMoments(float* adam_m, float* adam_v) {
  TRAINER_TRY(GatherRows(adam_m));
  return GatherRows(adam_v);
}

Status TrainStep::GatherRows(float* buffer) {
  if (comm_.size() == 1) return Status::Ok();
  const size_t H = MlpLayout::kHidden, count = static_cast<size_t>(slice_rows_) * H;
  float* w1 = buffer + MlpLayout::kW1;  // (784, 128)
  if (padded_.empty()) {                // W*R == 784: the slices tile W1 exactly, gather in place
    return comm_.AllGather(w1 + static_cast<size_t>(rows_.begin) * H, w1, count);
  }
  // Equal counts: the last slices are short or empty. Rows [0, 784) of padded_ are still W1.
  float* own = padded_.data() + static_cast<size_t>(comm_.rank()) * count;
  std::memcpy(own, w1 + static_cast<size_t>(rows_.begin) * H, (rows_.end - rows_.begin) * H * sizeof(float));
  TRAINER_TRY(comm_.AllGather(own, padded_.data(), count));
  std::memcpy(w1, padded_.data(), size_t{MlpLayout::kIn} * H * sizeof(float));
  return Status::Ok();
}

}  // namespace trainer
