#include "oci/digest.h"

#include <gtest/gtest.h>

namespace imgtool::oci {

TEST(Digest, OfEmptyIsTheWellKnownValue) {
  EXPECT_EQ(Digest::Of("").str(), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Digest, StreamingEqualsOneShot) {
  Sha256 h;
  h.Update("hello ");
  h.Update("world");
  EXPECT_EQ(h.bytes(), 11u);
  EXPECT_EQ(h.Finish(), Digest::Of("hello world"));
}

TEST(Digest, ParseRoundTrips) {
  std::string s = Digest::Of("x").str();
  auto d = Digest::Parse(s);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->str(), s);
  EXPECT_EQ(d->Short(), s.substr(0, 19));
}

TEST(Digest, ParseRefusesOtherForms) {
  const std::string hex(64, 'a');
  EXPECT_EQ(Digest::Parse("sha512:" + hex).error().message,
            "digest 'sha512:" + hex + "': only sha256 digests are supported");
  EXPECT_FALSE(Digest::Parse("sha256:" + std::string(63, 'a')).ok());
  EXPECT_FALSE(Digest::Parse("sha256:" + std::string(64, 'A')).ok());
  EXPECT_FALSE(Digest::Parse("sha256:" + std::string(63, 'a') + "g").ok());
  EXPECT_EQ(Digest::Parse("").error().kind, ErrorKind::kInvalidInput);
}

}  // namespace imgtool::oci
