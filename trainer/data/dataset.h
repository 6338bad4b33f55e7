// Fashion-MNIST: the four IDX files, checked against each other, pixels scaled to [0, 1]
// like the Keras example (x / 255). Also the per-epoch shuffle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace trainer {

constexpr int kImageSize = 784;  // 28 * 28
constexpr int kClasses = 10;

struct Split {
  int count = 0;
  std::vector<float> images;    // (count, 784) in [0, 1]
  std::vector<uint8_t> labels;  // (count,) in 0..9
};

struct Dataset {
  Split train;
  Split test;
};

constexpr const char* kDefaultDataDir = "/usr/share/datasets/fashion-mnist";

// Loads DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz. limit > 0 keeps only the
// first `limit` examples of train (resp. test), for short test runs.
Result<Dataset> LoadFashionMnist(const std::string& dir, int train_limit, int test_limit);

// The order of training examples for `epoch`: a Fisher-Yates shuffle driven by Philox
// keyed by the seed. Same (seed, epoch, n) -> same permutation, everywhere.
std::vector<int32_t> EpochPermutation(uint64_t seed, int epoch, int n);

}  // namespace trainer
