// The golden run is the trainer's own loop (trainer::Train) on synthetic data, in one
// process with the local communicator: the same step, init, Adam and digest code the real
// job runs, so a node that computes other bits here would compute other bits there. It is
// not a benchmark and not an accuracy check (the labels are noise).
#include "fleet/golden_run.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "comm/comm.h"
#include "core/philox.h"
#include "data/dataset.h"
#include "train/train.h"

namespace imgtool::fleet {
namespace {

constexpr int kGlobalBatch = 64;  // the trainer's defaults: a golden run has one shape
constexpr int kShards = 8;
constexpr int kMaxSteps = 100000;
// Examples are drawn for at most this many steps; longer runs take more epochs over them
// (each epoch shuffled anew), so memory stays at ~26 MB whatever --golden-steps says.
constexpr int kMaxPoolSteps = 128;
constexpr int kTestExamples = 100;

// Philox counter word 0 for synthetic data: stream 0x10 (the trainer's streams are 1..3,
// keyed by the same seed, so the draws never overlap theirs) and which split.
constexpr uint32_t kSyntheticStream = 0x10u << 24;

// `count` examples like Fashion-MNIST's: pixels k/255 (scaled as the dataset loader
// scales), labels 0..9. Example i's pixels come from counters (stream|split, i, j/4).
trainer::Split SyntheticSplit(uint64_t seed, uint32_t split, int count) {
  const trainer::PhiloxKey key = trainer::KeyFromSeed(seed);
  trainer::Split s;
  s.count = count;
  s.images.resize(static_cast<size_t>(count) * trainer::kImageSize);  // (count, 784)
  s.labels.resize(static_cast<size_t>(count));                        // (count)
  for (int i = 0; i < count; ++i) {
    float* row = &s.images[static_cast<size_t>(i) * trainer::kImageSize];
    const uint32_t example = static_cast<uint32_t>(i);
    for (uint32_t g = 0; g < trainer::kImageSize / 4; ++g) {
      trainer::PhiloxCounter bits = trainer::Philox4x32({kSyntheticStream | split, example, g, 0}, key);
      for (int k = 0; k < 4; ++k) row[g * 4 + static_cast<uint32_t>(k)] = static_cast<float>(bits[k] >> 24) / 255.0f;
    }
    trainer::PhiloxCounter label = trainer::Philox4x32({kSyntheticStream | split, example, 0xffffffffu, 0}, key);
    s.labels[static_cast<size_t>(i)] = static_cast<uint8_t>(label[0] % trainer::kClasses);
  }
  return s;
}

}  // namespace

Result<GoldenRunResult> GoldenRun(const GoldenRunOptions& options) {
  if (options.steps < 1 || options.steps > kMaxSteps) {
    return MakeError(ErrorKind::kInvalidInput, "golden run: steps " + std::to_string(options.steps) +
                                                   " is outside 1.." + std::to_string(kMaxSteps));
  }
  if (options.threads < 1) {
    return MakeError(ErrorKind::kInvalidInput, "golden run: threads must be at least 1");
  }
  auto t0 = std::chrono::steady_clock::now();
  const int pool_steps = std::min(options.steps, kMaxPoolSteps);
  trainer::Dataset data;
  data.train = SyntheticSplit(options.seed, 1, pool_steps * kGlobalBatch);
  data.test = SyntheticSplit(options.seed, 2, kTestExamples);  // Train evaluates at epoch ends

  trainer::TrainConfig cfg;
  cfg.epochs = (options.steps + pool_steps - 1) / pool_steps;
  cfg.max_steps = options.steps;
  cfg.global_batch = kGlobalBatch;
  cfg.shards = kShards;
  cfg.seed = options.seed;
  cfg.log_every = 0;
  cfg.threads = options.threads;
  auto comm = trainer::MakeLocalComm();
  trainer::TrainObserver quiet;
  auto sum = trainer::Train(cfg, data, *comm, quiet);
  if (!sum.ok()) return sum.error().Context("golden run");
  GoldenRunResult r;
  r.weights_digest = sum->digest;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace imgtool::fleet
