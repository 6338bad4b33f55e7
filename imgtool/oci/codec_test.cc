#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "oci/base64.h"
#include "oci/hex.h"

namespace imgtool::oci {
namespace {

TEST(Hex, RoundTripsEveryByte) {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  std::string hex = HexEncode(all);
  EXPECT_EQ(hex.substr(0, 8), "00010203");
  EXPECT_EQ(hex.substr(hex.size() - 4), "feff");
  EXPECT_EQ(HexDecode(hex), all);
  EXPECT_EQ(HexDecode(""), std::string());
}

TEST(Hex, RefusesAnotherSpelling) {
  for (const char* bad : {"0F", "abc", "zz", "0x", " 0", "00\n"}) EXPECT_FALSE(HexDecode(bad).has_value()) << bad;
}

TEST(Base64, RoundTrips) {
  for (const std::string& s :
       std::vector<std::string>{"", "a", "ab", "abc", "alice:s3cret", "user:pa:ss", std::string("\0\xff\xfe", 3)}) {
    auto d = Base64Decode(Base64Encode(s), "t");
    ASSERT_TRUE(d.ok()) << s;
    EXPECT_EQ(*d, s);
  }
  EXPECT_EQ(Base64Encode("alice:s3cret"), "YWxpY2U6czNjcmV0");
  EXPECT_EQ(Base64Encode("a"), "YQ==");
}

TEST(Base64, RefusesWhatIsNotCanonical) {
  // Unpadded, bits set in the padding, blanks OpenSSL would skip, a newline, padding only,
  // the URL alphabet, padding in the middle.
  for (const char* bad : {"YQ", "YR==", " YQ=", "YQ==\n", "====", "Y===", "-_8=", "YQ==YQ==", "YQ=A"}) {
    auto d = Base64Decode(bad, "field");
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.error().message, "field: not base64");
  }
}

}  // namespace
}  // namespace imgtool::oci
