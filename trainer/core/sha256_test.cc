#include "core/sha256.h"

#include <gtest/gtest.h>

namespace trainer {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(HexOf(Sha256("", 0)), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HexOf(Sha256("abc", 3)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace trainer
