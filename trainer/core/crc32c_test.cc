#include "core/crc32c.h"

#include <gtest/gtest.h>

#include <string>

namespace trainer {

TEST(Crc32c, KnownVectors) {
  const std::string check = "123456789";  // the standard check value (RFC 3720)
  EXPECT_EQ(Crc32c(check.data(), check.size()), 0xe3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  unsigned char zeros[32] = {};
  EXPECT_EQ(Crc32c(zeros, sizeof(zeros)), 0x8a9136aau);  // RFC 3720 B.4
}

TEST(Crc32c, MaskedIsRotatedPlusConstant) {
  const std::string s = "tensorboard";
  uint32_t c = Crc32c(s.data(), s.size());
  EXPECT_EQ(MaskedCrc32c(s.data(), s.size()), ((c >> 15) | (c << 17)) + 0xa282ead8u);
}

}  // namespace trainer
