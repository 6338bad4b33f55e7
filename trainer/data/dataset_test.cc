#include "data/dataset.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace trainer {

TEST(Dataset, PermutationIsDeterministicAndComplete) {
  auto a = EpochPermutation(42, 0, 1000);
  EXPECT_EQ(a, EpochPermutation(42, 0, 1000));
  EXPECT_NE(a, EpochPermutation(42, 1, 1000));
  EXPECT_NE(a, EpochPermutation(43, 0, 1000));
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(sorted[static_cast<size_t>(i)], i);
}

TEST(Dataset, LoadsFashionMnistWhenInstalled) {
  if (!std::filesystem::exists(std::string(kDefaultDataDir) + "/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "dataset-fashion-mnist not installed";
  }
  auto d = LoadFashionMnist(kDefaultDataDir, 0, 500);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->train.count, 60000);
  EXPECT_EQ(d->test.count, 500);
  EXPECT_EQ(d->train.images.size(), 60000u * 784);
  EXPECT_LE(*std::max_element(d->train.images.begin(), d->train.images.end()), 1.0f);
  EXPECT_EQ(*std::max_element(d->train.labels.begin(), d->train.labels.end()), 9);
}

TEST(Dataset, MissingFolderIsNotFound) {
  auto d = LoadFashionMnist("/nonexistent", 0, 0);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().kind, ErrorKind::kNotFound);
  EXPECT_NE(d.error().message.find("/nonexistent/train-images-idx3-ubyte.gz"), std::string::npos);
}

}  // namespace trainer
