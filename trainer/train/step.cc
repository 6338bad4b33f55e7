#include "train/step.h"

#include <algorithm>
#include <cstring>

#include "cpu/ops.h"

namespace trainer {
namespace {

bool PowerOfTwo(int v) { return v > 0 && (v & (v - 1)) == 0; }

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

GradientStep::GradientStep(const Split& train, StepShape shape, uint64_t seed, Comm& comm, ThreadPool& pool)
    : train_(train), shape_(shape), seed_(seed), comm_(comm), pool_(pool) {
  shard_size_ = shape.global_batch / shape.shards;
  local_shards_ = shape.shards / comm.size();
  first_shard_ = comm.rank() * local_shards_;
  stride_ = (MlpLayout::kCount + 1 + 15) / 16 * 16;
  local_.resize(static_cast<size_t>(local_shards_) * stride_);
  gathered_.resize(static_cast<size_t>(comm.size()) * stride_);
  x_.resize(static_cast<size_t>(local_shards_) * shard_size_ * MlpLayout::kIn);
  y_.resize(static_cast<size_t>(local_shards_) * shard_size_);
  mask_.resize(static_cast<size_t>(local_shards_) * shard_size_ * MlpLayout::kHidden);
  for (int s = 0; s < local_shards_; ++s) ws_.push_back(std::make_unique<MlpWorkspace<float>>(shard_size_));
}

Status GradientStep::Run(const float* params, const std::vector<int32_t>& perm, int epoch, int step, float* grad,
                         double* loss) {
  const size_t P = MlpLayout::kCount;
  const double scale = 1.0 / shape_.global_batch;  // mean over the global batch
  pool_.ParallelFor(local_shards_, [&](int ls) {
    const int shard = first_shard_ + ls;
    const int first = shard * shard_size_;  // position of the shard in the global batch
    float* x = x_.data() + static_cast<size_t>(ls) * shard_size_ * MlpLayout::kIn;  // (shard_size, 784)
    uint8_t* y = y_.data() + static_cast<size_t>(ls) * shard_size_;                 // (shard_size)
    float* mask = mask_.data() + static_cast<size_t>(ls) * shard_size_ * MlpLayout::kHidden;  // (shard_size, 128)
    for (int i = 0; i < shard_size_; ++i) {
      size_t ex = static_cast<size_t>(perm[static_cast<size_t>(step) * shape_.global_batch + first + i]);
      std::memcpy(x + static_cast<size_t>(i) * MlpLayout::kIn, &train_.images[ex * MlpLayout::kIn],
                  MlpLayout::kIn * sizeof(float));
      y[i] = train_.labels[ex];
    }
    cpu::dropout_mask(mask, shard_size_, MlpLayout::kHidden, kDropoutRate, seed_, epoch, step, first);
    float* g = local_.data() + static_cast<size_t>(ls) * stride_;  // (stride): gradient, then the loss
    double shard_loss = ShardGradient(params, x, y, shard_size_, mask, scale, g, *ws_[static_cast<size_t>(ls)]);
    g[P] = static_cast<float>(shard_loss);
  });
  TreeSum(local_.data(), local_shards_, stride_, P + 1, pool_);
  TRAINER_TRY(comm_.AllGather(local_.data(), gathered_.data(), stride_));
  TreeSum(gathered_.data(), comm_.size(), stride_, P + 1, pool_);
  std::memcpy(grad, gathered_.data(), P * sizeof(float));
  *loss = static_cast<double>(gathered_[P]) / shape_.global_batch;
  return Status::Ok();
}

}  // namespace trainer
