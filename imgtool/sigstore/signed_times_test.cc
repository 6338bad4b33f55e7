// Issue 25: which RFC 3161 timestamps count, and the thresholds (signed_times.h), on
// timestamps minted by throwaway TSAs: one that does not verify is skipped and the Rekor
// time still counts; a TSA counts once however often it stamped; a repeat of the same
// bytes, or more than 32, is refused; strict mode refuses any that does not verify.
#include "sigstore/signed_times.h"

#include <gtest/gtest.h>

#include "sigstore/minted_tsa.h"

namespace imgtool::sigstore {
namespace {

const std::string kSignature = "the bundle's signature";

bool DeniedWith(const Status& s, std::string_view words) {
  return !s.ok() && s.error().kind == ErrorKind::kDenied && s.error().message.find(words) != std::string::npos;
}

// Two authorities: `a` and `b` with their own URIs.
struct TwoTsas {
  Tsa a = MakeTsa("timeStamping"), b = MakeTsa("timeStamping");
  TrustedRoot root;
  TwoTsas() {
    root.timestamp_authorities = {a.Authority(), b.Authority()};
    root.timestamp_authorities[0].uri = "https://tsa-a.test";
    root.timestamp_authorities[1].uri = "https://tsa-b.test";
  }
};

TEST(SignedTimes, AFailingTimestampIsSkippedAndTheRekorTimeCounts) {
  TwoTsas t;
  std::string good = Stamp(t.a, EVP_sha256(), kSignature);
  std::string other = Stamp(t.a, EVP_sha256(), "another signature");  // verifies over other bytes only
  auto stamps = VerifyTimestamps({other, good}, kSignature, t.root, false);
  ASSERT_TRUE(stamps.ok()) << stamps.error().message;
  ASSERT_EQ(stamps->verified.size(), 1u);
  EXPECT_EQ(stamps->verified[0].index, 1u);
  EXPECT_EQ(stamps->authorities, 1u);
  ASSERT_EQ(stamps->skipped.size(), 1u);
  EXPECT_NE(stamps->skipped[0].find("timestamp 0: "), std::string::npos) << stamps->skipped[0];
  EXPECT_TRUE(CheckTimeThresholds(1, *stamps, TimePolicy{}).ok());

  // Only the failing one, beside one Rekor integrated time: that time alone meets the default.
  auto only_bad = VerifyTimestamps({other}, kSignature, t.root, false);
  ASSERT_TRUE(only_bad.ok());
  EXPECT_TRUE(only_bad->verified.empty());
  EXPECT_TRUE(CheckTimeThresholds(1, *only_bad, TimePolicy{}).ok());
  // ... and no time at all is a denial naming why the timestamp was skipped.
  Status none = CheckTimeThresholds(0, *only_bad, TimePolicy{});
  EXPECT_TRUE(DeniedWith(none, "no verified signing time")) << none.error().message;
  EXPECT_TRUE(DeniedWith(none, "timestamp 0: ")) << none.error().message;
}

TEST(SignedTimes, AThresholdNotMetIsDenied) {
  TwoTsas t;
  auto stamps = VerifyTimestamps({Stamp(t.a, EVP_sha256(), kSignature)}, kSignature, t.root, false);
  ASSERT_TRUE(stamps.ok());
  TimePolicy two{2, 0, false}, three{3, 0, false};
  EXPECT_TRUE(CheckTimeThresholds(1, *stamps, two).ok());  // the log's time and the TSA's
  Status s = CheckTimeThresholds(1, *stamps, three);
  EXPECT_TRUE(DeniedWith(s, "2 sources (1 log integrated time, 1 timestamp authority), the timestamp threshold is 3"))
      << s.error().message;
  // Signed timestamps: the log's time does not count toward them.
  TimePolicy signed_two{1, 2, false};
  s = CheckTimeThresholds(5, *stamps, signed_two);
  EXPECT_TRUE(DeniedWith(s, "1 timestamp authority vouched, the signed timestamp threshold is 2")) << s.error().message;
  auto both = VerifyTimestamps({Stamp(t.a, EVP_sha256(), kSignature), Stamp(t.b, EVP_sha384(), kSignature)}, kSignature,
                               t.root, false);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->authorities, 2u);
  EXPECT_TRUE(CheckTimeThresholds(0, *both, signed_two).ok());
}

TEST(SignedTimes, OneAuthorityCountsOnce) {
  TwoTsas t;
  // Two different timestamps from one TSA (two tokens, two serials): both verify, one counts.
  std::vector<std::string> same_tsa = {Stamp(t.a, EVP_sha256(), kSignature), Stamp(t.a, EVP_sha512(), kSignature)};
  ASSERT_NE(same_tsa[0], same_tsa[1]);
  auto stamps = VerifyTimestamps(same_tsa, kSignature, t.root, false);
  ASSERT_TRUE(stamps.ok());
  EXPECT_EQ(stamps->verified.size(), 2u);  // both are times the certificate must be valid at
  EXPECT_EQ(stamps->authorities, 1u);
  EXPECT_FALSE(CheckTimeThresholds(1, *stamps, TimePolicy{3, 0, false}).ok());
  EXPECT_FALSE(CheckTimeThresholds(0, *stamps, TimePolicy{1, 2, false}).ok());
  // Two entries of the root with one URI (a TSA's key periods) are one authority too.
  TrustedRoot rotated;
  rotated.timestamp_authorities = {t.b.Authority(), t.a.Authority()};
  auto by_uri = VerifyTimestamps({Stamp(t.a, EVP_sha256(), kSignature), Stamp(t.b, EVP_sha256(), kSignature)},
                                 kSignature, rotated, false);
  ASSERT_TRUE(by_uri.ok());
  EXPECT_EQ(by_uri->verified.size(), 2u);
  EXPECT_EQ(by_uri->authorities, 1u);  // MakeTsa gives every TSA the URI https://tsa.test
}

TEST(SignedTimes, TheSameBytesTwiceAreRefused) {
  TwoTsas t;
  std::string good = Stamp(t.a, EVP_sha256(), kSignature);
  std::string other = Stamp(t.b, EVP_sha256(), kSignature);
  auto stamps = VerifyTimestamps({good, other, good}, kSignature, t.root, false);
  ASSERT_FALSE(stamps.ok());
  EXPECT_TRUE(DeniedWith(stamps.error(), "timestamps 0 and 2 are the same bytes")) << stamps.error().message;
  // A repeated failing one too: a duplicate is refused before anything is verified.
  EXPECT_FALSE(VerifyTimestamps({"junk", "junk"}, kSignature, t.root, false).ok());
}

TEST(SignedTimes, MoreThanTheCapAreRefusedBeforeAnyIsVerified) {
  TwoTsas t;
  std::vector<std::string> many;
  for (size_t i = 0; i <= kMaxTimestamps; ++i) many.push_back("not a timestamp " + std::to_string(i));
  auto stamps = VerifyTimestamps(many, kSignature, t.root, false);
  ASSERT_FALSE(stamps.ok());
  EXPECT_TRUE(DeniedWith(stamps.error(), "too many RFC 3161 timestamps: 33 (at most 32)")) << stamps.error().message;
  many.pop_back();
  auto at_cap = VerifyTimestamps(many, kSignature, t.root, false);
  ASSERT_TRUE(at_cap.ok());
  EXPECT_EQ(at_cap->skipped.size(), kMaxTimestamps);
}

TEST(SignedTimes, StrictModeRefusesAnyThatDoesNotVerify) {
  TwoTsas t;
  std::string good = Stamp(t.a, EVP_sha256(), kSignature);
  std::string other = Stamp(t.b, EVP_sha256(), "another signature");
  auto strict = VerifyTimestamps({good, other}, kSignature, t.root, true);
  ASSERT_FALSE(strict.ok());
  EXPECT_TRUE(DeniedWith(strict.error(), "timestamp 1: ")) << strict.error().message;
  EXPECT_TRUE(DeniedWith(strict.error(), "strict")) << strict.error().message;
  auto all_good = VerifyTimestamps({good, Stamp(t.b, EVP_sha256(), kSignature)}, kSignature, t.root, true);
  ASSERT_TRUE(all_good.ok());
  EXPECT_EQ(all_good->authorities, 2u);
}

TEST(SignedTimes, ThresholdsBelowTheirMinimumAreBadInput) {
  EXPECT_TRUE(ValidateTimePolicy(TimePolicy{}).ok());
  Status zero = ValidateTimePolicy(TimePolicy{0, 0, false});
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().kind, ErrorKind::kInvalidInput);
  EXPECT_NE(zero.error().message.find("--timestamp-threshold"), std::string::npos);
  EXPECT_EQ(ValidateTimePolicy(TimePolicy{1, -1, false}).error().kind, ErrorKind::kInvalidInput);
}

}  // namespace
}  // namespace imgtool::sigstore
