#include "data/dataset.h"

#include "core/philox.h"
#include "data/idx.h"

namespace trainer {
namespace {

__extension__ using U128 = unsigned __int128;

Result<Split> LoadSplit(const std::string& dir, const std::string& prefix, int limit) {
  std::string images_path = dir + "/" + prefix + "-images-idx3-ubyte.gz";
  std::string labels_path = dir + "/" + prefix + "-labels-idx1-ubyte.gz";
  auto images = ReadIdxGz(images_path, 3);
  if (!images.ok()) return images.error();
  auto labels = ReadIdxGz(labels_path, 1);
  if (!labels.ok()) return labels.error();
  if (images->dims[1] != 28 || images->dims[2] != 28) {
    return MakeError(ErrorKind::kIntegrity, images_path + ": images are " + std::to_string(images->dims[1]) + "x" +
                                                std::to_string(images->dims[2]) + ", expected 28x28");
  }
  if (images->dims[0] != labels->dims[0]) {
    return MakeError(ErrorKind::kIntegrity, labels_path + ": holds " + std::to_string(labels->dims[0]) +
                                                " labels but " + images_path + " holds " +
                                                std::to_string(images->dims[0]) + " images");
  }
  Split s;
  s.count = static_cast<int>(images->dims[0]);
  if (limit > 0 && limit < s.count) s.count = limit;
  for (int i = 0; i < s.count; ++i) {
    if (labels->data[static_cast<size_t>(i)] >= kClasses) {
      return MakeError(ErrorKind::kIntegrity, labels_path + ": label " + std::to_string(labels->data[i]) +
                                                  " at index " + std::to_string(i) + " is not in 0..9");
    }
  }
  s.labels.assign(labels->data.begin(), labels->data.begin() + s.count);
  s.images.resize(static_cast<size_t>(s.count) * kImageSize);
  for (size_t i = 0; i < s.images.size(); ++i) s.images[i] = static_cast<float>(images->data[i]) / 255.0f;
  return s;
}

}  // namespace

Result<Dataset> LoadFashionMnist(const std::string& dir, int train_limit, int test_limit) {
  Dataset d;
  auto train = LoadSplit(dir, "train", train_limit);
  if (!train.ok()) return train.error();
  auto test = LoadSplit(dir, "t10k", test_limit);
  if (!test.ok()) return test.error();
  d.train = std::move(*train);
  d.test = std::move(*test);
  return d;
}

std::vector<int32_t> EpochPermutation(uint64_t seed, int epoch, int n) {
  std::vector<int32_t> perm(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) perm[static_cast<size_t>(i)] = i;
  PhiloxKey key = KeyFromSeed(seed);
  for (int i = n - 1; i > 0; --i) {
    PhiloxCounter c = {StreamWord(RngStream::kShuffle, 0), static_cast<uint32_t>(epoch), static_cast<uint32_t>(i), 0};
    PhiloxCounter r = Philox4x32(c, key);
    // 64 random bits times (i+1), high half: uniform in [0, i] with bias below 2^-40.
    uint64_t bits = uint64_t{r[0]} << 32 | r[1];
    uint64_t j = static_cast<uint64_t>((static_cast<U128>(bits) * static_cast<uint64_t>(i + 1)) >> 64);
    std::swap(perm[static_cast<size_t>(i)], perm[j]);
  }
  return perm;
}

}  // namespace trainer
