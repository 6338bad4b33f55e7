// EvaluateIndex on hand-written facts: how per-image results combine into one row per
// rule, and which rules judge the index itself.
#include <gtest/gtest.h>

#include "policy/evaluate.h"

namespace imgtool::policy {
namespace {

const std::string kIndex = "sha256:" + std::string(64, 'a');
const std::string kAmd64 = "sha256:" + std::string(64, 'b');
const std::string kArm64 = "sha256:" + std::string(64, 'c');

ImageFacts Image(const std::string& digest) {
  ImageFacts f;
  f.reference = "oci:/l@" + kIndex;
  f.digest = digest;
  f.user = "10001:10001";
  f.labels = {{"src", "x"}};
  f.setuid_files = std::vector<SetuidFile>{};
  f.compressed_size = 1000;
  return f;  // signature left ungathered: signedBy never looks at an image of an index
}

ImageFacts Top() {
  ImageFacts f;
  f.reference = "oci:/l@" + kIndex;
  f.digest = kIndex;
  f.signature = SignatureFacts{true, {"verified by k.pub"}};
  return f;
}

IndexFacts TwoPlatforms() {
  IndexFacts i;
  i.images = {{"linux/amd64", Image(kAmd64)}, {"linux/arm64", Image(kArm64)}};
  return i;
}

Policy Rules() {
  Policy p;
  p.non_root = true;
  p.digest_pinned = true;
  p.signed_by = SignedByRule{{"/k.pub"}};
  p.required_labels = std::vector<std::string>{"src"};
  p.no_setuid = true;
  return p;
}

const RuleResult& Row(const ImageDecision& d, const std::string& rule) {
  for (const auto& r : d.rules) {
    if (r.rule == rule) return r;
  }
  static const RuleResult none{"none", false, "no such row"};
  return none;
}

TEST(EvaluateIndex, EveryImagePassingPassesOneRowPerRule) {
  auto d = EvaluateIndex(Rules(), Top(), TwoPlatforms());
  EXPECT_TRUE(d.pass);
  EXPECT_EQ(d.digest, kIndex);
  ASSERT_EQ(d.rules.size(), 5u);
  EXPECT_EQ(Row(d, "nonRoot").reason, "linux/amd64, linux/arm64: uid 10001");
  EXPECT_EQ(Row(d, "digestPinned").reason, "pinned to " + kIndex);
  EXPECT_EQ(Row(d, "signedBy").reason, "verified by k.pub");
  EXPECT_EQ(Row(d, "requiredLabels").reason, "linux/amd64, linux/arm64: 1 required labels present");
}

TEST(EvaluateIndex, OneImageFailingOneRuleNamesItsPlatformAndDigest) {
  IndexFacts i = TwoPlatforms();
  i.images[1].image.user = "0:0";
  auto d = EvaluateIndex(Rules(), Top(), i);
  EXPECT_FALSE(d.pass);
  EXPECT_FALSE(Row(d, "nonRoot").pass);
  EXPECT_EQ(Row(d, "nonRoot").reason, "linux/arm64 sha256:cccccccccccc: config User '0:0' is uid 0 (root)");
  EXPECT_TRUE(Row(d, "requiredLabels").pass);
  EXPECT_TRUE(Row(d, "noSetuid").pass);

  i.images[0].image.setuid_files = MakeError(ErrorKind::kIntegrity, "listing layer x: truncated");
  i.images[1].image.setuid_files = std::vector<SetuidFile>{{"sha256:0123456789abcdef", "usr/bin/su", 04755}};
  d = EvaluateIndex(Rules(), Top(), i);
  EXPECT_EQ(Row(d, "noSetuid").reason,
            "linux/amd64 sha256:bbbbbbbbbbbb: listing layer x: truncated; "
            "linux/arm64 sha256:cccccccccccc: 1 setuid/setgid files: /usr/bin/su (4755, layer sha256:0123456789ab)");
}

TEST(EvaluateIndex, PassingReasonsThatDifferAreListedApart) {
  IndexFacts i = TwoPlatforms();
  i.images[1].image.user = "10002";
  EXPECT_EQ(Row(EvaluateIndex(Rules(), Top(), i), "nonRoot").reason, "linux/amd64: uid 10001; linux/arm64: uid 10002");
}

TEST(EvaluateIndex, AnImageThatCannotBeOpenedFailsEveryImageRule) {
  IndexFacts i = TwoPlatforms();
  i.images[0].image.opened = MakeError(ErrorKind::kNotFound, "blob missing");
  auto d = EvaluateIndex(Rules(), Top(), i);
  EXPECT_EQ(Row(d, "nonRoot").reason, "linux/amd64 sha256:bbbbbbbbbbbb: cannot open the image: blob missing");
  EXPECT_EQ(Row(d, "requiredLabels").reason, "linux/amd64 sha256:bbbbbbbbbbbb: cannot open the image: blob missing");
  EXPECT_TRUE(Row(d, "signedBy").pass);
  EXPECT_FALSE(d.pass);
}

TEST(EvaluateIndex, NoImageToJudgeFailsClosed) {
  IndexFacts i;
  i.skipped = {"unknown/unknown sha256:dddddddddddd: not a runnable platform (an attestation manifest)"};
  auto d = EvaluateIndex(Rules(), Top(), i);
  EXPECT_FALSE(d.pass);
  EXPECT_EQ(d.skipped, i.skipped);
  EXPECT_EQ(Row(d, "nonRoot").reason,
            "no image in the index to judge: skipped unknown/unknown sha256:dddddddddddd: not a runnable platform (an "
            "attestation manifest)");
  EXPECT_EQ(Row(d, "noSetuid").reason, Row(d, "nonRoot").reason);
  EXPECT_TRUE(Row(d, "signedBy").pass);  // about the index, which is signed
  EXPECT_EQ(Row(EvaluateIndex(Rules(), Top(), IndexFacts{}), "nonRoot").reason,
            "no image in the index to judge: it has no entries");
}

TEST(EvaluateIndex, TooManyEntriesFailClosed) {
  IndexFacts i = TwoPlatforms();
  i.bounded = MakeError(ErrorKind::kInvalidInput, "the index has 65 entries; at most 64 are judged");
  auto d = EvaluateIndex(Rules(), Top(), i);
  EXPECT_FALSE(d.pass);
  EXPECT_EQ(Row(d, "nonRoot").reason, "the index has 65 entries; at most 64 are judged");
}

TEST(EvaluateIndex, SignedByIsJudgedOnTheIndexDigestOnly) {
  // Images signed, the index not: denied (a runtime pulls by the index's digest).
  IndexFacts i = TwoPlatforms();
  for (auto& c : i.images) c.image.signature = SignatureFacts{true, {"verified by k.pub"}};
  ImageFacts top = Top();
  top.signature = SignatureFacts{false, {"no signatures for " + kIndex}};
  auto d = EvaluateIndex(Rules(), top, i);
  EXPECT_FALSE(Row(d, "signedBy").pass);
  EXPECT_EQ(Row(d, "signedBy").reason, "no signatures for " + kIndex);
  // The index signed, its images not: passes (their signatures are never asked for).
  d = EvaluateIndex(Rules(), Top(), TwoPlatforms());
  EXPECT_EQ(Row(d, "signedBy").reason, "verified by k.pub");
  EXPECT_TRUE(d.pass);
}

TEST(EvaluateIndex, DigestPinnedJudgesTheReferenceAsWritten) {
  ImageFacts top = Top();
  top.reference = "oci:/l:v1";
  auto d = EvaluateIndex(Rules(), top, TwoPlatforms());
  EXPECT_EQ(Row(d, "digestPinned").reason, "not pinned: the reference has tag 'v1' and no @sha256:...");
  top.reference = "oci:/l@" + kAmd64;  // pinned to a child, resolved to the index
  EXPECT_FALSE(Row(EvaluateIndex(Rules(), top, TwoPlatforms()), "digestPinned").pass);
}

TEST(EvaluateIndex, ManyFailuresAreCut) {
  IndexFacts i;
  for (int k = 0; k < 8; ++k) {
    ImageFacts f = Image("sha256:" + std::string(63, 'e') + std::to_string(k));
    f.user = "";
    i.images.push_back({"linux/arch" + std::to_string(k), f});
  }
  std::string want;
  for (int k = 0; k < 5; ++k) {
    want += (k ? "; linux/arch" : "linux/arch") + std::to_string(k) +
            " sha256:eeeeeeeeeeee: config User is empty: the container runs as root";
  }
  EXPECT_EQ(Row(EvaluateIndex(Rules(), Top(), i), "nonRoot").reason, want + "; and 3 more");
}

TEST(EvaluateIndex, ReferenceFactsChooseImageOrIndex) {
  ReferenceFacts image{Image(kAmd64), std::nullopt};
  image.top.signature = SignatureFacts{true, {"verified by k.pub"}};
  image.top.reference = "oci:/l@" + kAmd64;
  EXPECT_TRUE(Evaluate(Rules(), image).pass);
  EXPECT_EQ(Row(Evaluate(Rules(), image), "nonRoot").reason, "uid 10001");
  ReferenceFacts index{Top(), TwoPlatforms()};
  EXPECT_EQ(Row(Evaluate(Rules(), index), "nonRoot").reason, "linux/amd64, linux/arm64: uid 10001");
  // Unopened: every rule fails with the cause, index or not.
  index.top.opened = MakeError(ErrorKind::kTransport, "no answer");
  EXPECT_EQ(Row(Evaluate(Rules(), index), "signedBy").reason, "cannot open the image: no answer");
}

}  // namespace
}  // namespace imgtool::policy
