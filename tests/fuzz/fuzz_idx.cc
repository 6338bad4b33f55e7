// IDX files (trainer/data/idx.h ParseIdx): the dataset a trainer image reads, after
// gunzip. Asked for the dimensions (Fashion-MNIST) images and labels have, and for the
// input's own count, so the payload checks are reached.
#include <cstddef>
#include <cstdint>
#include <string>

#include "data/idx.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(imgtool::fuzz::Bytes(data, size));
  (void)trainer::ParseIdx(bytes, 3, "images.idx");
  (void)trainer::ParseIdx(bytes, 1, "labels.idx");
  if (size >= 4) (void)trainer::ParseIdx(bytes, data[3], "any.idx");
  return 0;
}
