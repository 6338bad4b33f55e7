// DigestLayer on a pipeline (a CoreBudget with a spare core) against the same call on
// one thread: the same digests, and for every damaged stream or failing source the same
// error, with every thread stopped (a hang here is a deadlock) and the core handed back.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "archive/archive_test_util.h"
#include "archive/layer.h"

namespace imgtool::archive {
namespace {

using testing::Inline;
using testing::NoiseBytes;
using testing::ReadAll;
using testing::ScratchDir;
using testing::WriteBlob;

// Hands out the bytes in reads of at most `step`, fails with "disk on fire" once `fail_at`
// bytes were handed out, and notes whether a read ever found the budget's core taken
// (the digest was on a pipeline then).
class TestReader : public oci::Reader {
 public:
  TestReader(std::string bytes, const CoreBudget* budget, size_t step = SIZE_MAX, size_t fail_at = SIZE_MAX)
      : bytes_(std::move(bytes)), budget_(budget), step_(step), fail_at_(fail_at) {}
  Result<size_t> Read(void* buf, size_t n) override {
    if (budget_ != nullptr && budget_->spare() == 0) piped = true;
    if (pos_ >= fail_at_) return MakeError(ErrorKind::kInternal, "disk on fire");
    size_t k = std::min({n, step_, bytes_.size() - pos_, fail_at_ - pos_});
    std::copy_n(bytes_.data() + pos_, k, static_cast<char*>(buf));
    pos_ += k;
    return k;
  }
  bool piped = false;

 private:
  std::string bytes_;
  const CoreBudget* budget_;
  size_t step_, fail_at_, pos_ = 0;
};

// A layer of ~6 MiB of noise and ~4 MiB of text: past the size that starts a pipeline.
std::string BigLayer(const ScratchDir& dir, Compression c) {
  std::string text;
  for (int i = 0; text.size() < (4 << 20); ++i) text += "line " + std::to_string(i * 7919 % 100003) + " of text\n";
  auto layer = WriteBlob(dir / "big", {Inline("a/noise", NoiseBytes(6 << 20, 3)), Inline("b/text", text)}, c);
  EXPECT_TRUE(layer.ok()) << layer.error().message;
  return ReadAll(dir / "big");
}

std::string Describe(const Result<BlobDigests>& r) {
  if (!r.ok()) {
    const ErrorKind k = r.error().kind;
    return std::string(k == ErrorKind::kIntegrity  ? "integrity"
                       : k == ErrorKind::kInternal ? "internal"
                                                   : "other") +
           ": " + r.error().message;
  }
  return r->digest.str() + " " + std::to_string(r->size) + " " + r->diff_id.str() + " " +
         std::to_string(r->uncompressed_size);
}

// One thread, then a pipeline, over the same bytes; both answers, and the budget back.
std::pair<std::string, std::string> Both(const std::string& blob, size_t step = SIZE_MAX, size_t fail_at = SIZE_MAX) {
  TestReader alone(blob, nullptr, step, fail_at);
  std::string one = Describe(DigestLayer(alone, "blob"));
  CoreBudget budget(1);
  TestReader piped(blob, &budget, step, fail_at);
  std::string pipe = Describe(DigestLayer(piped, "blob", true, &budget));
  EXPECT_EQ(budget.spare(), 1) << "the core was not handed back";
  EXPECT_TRUE(piped.piped || fail_at < (4 << 20)) << "the digest never went on a pipeline";
  return {one, pipe};
}

TEST(DigestPipeline, SameDigestsAsOneThread) {
  ScratchDir dir;
  for (Compression c : {Compression::kGzip, Compression::kZstd}) {
    std::string blob = BigLayer(dir, c);
    auto [one, pipe] = Both(blob);
    EXPECT_EQ(one.rfind("sha256:", 0), 0u) << one;
    EXPECT_EQ(one, pipe);
    auto [one_small, pipe_small] = Both(blob, 4093);  // reads of odd sizes: partial buffers
    EXPECT_EQ(one_small, one);
    EXPECT_EQ(pipe_small, one);
  }
}

TEST(DigestPipeline, MultiMemberGzip) {
  ScratchDir dir;
  std::string a = BigLayer(dir, Compression::kGzip);
  auto [one, pipe] = Both(a + a);
  EXPECT_EQ(one.rfind("sha256:", 0), 0u) << one;
  EXPECT_EQ(one, pipe);
}

TEST(DigestPipeline, DamageGivesTheSameErrorAsOneThread) {
  ScratchDir dir;
  std::string gz = BigLayer(dir, Compression::kGzip);
  std::string zst = BigLayer(dir, Compression::kZstd);
  auto flip = [](std::string s, size_t at) {
    s[at] ^= 0x5a;
    return s;
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"corrupt middle", flip(gz, gz.size() * 6 / 10)},
      {"corrupt early", flip(gz, 3 << 20)},
      {"bad CRC", flip(gz, gz.size() - 6)},
      {"truncated", gz.substr(0, gz.size() * 7 / 10)},
      {"trailer cut", gz.substr(0, gz.size() - 4)},
      {"trailing junk", gz + "junk"},
      {"zstd corrupt", flip(zst, zst.size() / 2)},
      {"zstd truncated", zst.substr(0, zst.size() - 3)},
  };
  for (const auto& [what, blob] : cases) {
    auto [one, pipe] = Both(blob);
    EXPECT_EQ(one.rfind("integrity: blob: ", 0), 0u) << what << ": " << one;  // kIntegrity
    EXPECT_EQ(one, pipe) << what;
  }
}

TEST(DigestPipeline, FailingSourceStopsEveryStage) {
  ScratchDir dir;
  std::string gz = BigLayer(dir, Compression::kGzip);
  for (size_t fail_at : {size_t{5} << 20, gz.size() - 1}) {
    auto [one, pipe] = Both(gz, SIZE_MAX, fail_at);
    EXPECT_EQ(one, "internal: disk on fire") << fail_at;
    EXPECT_EQ(pipe, one) << fail_at;
  }
}

// The pipeline reads ahead of its inflater: a source failing after a spot the inflater
// refuses at once (junk after the gzip member) must still give the refusal, as one
// thread (which never reads that far) does.
TEST(DigestPipeline, ErrorsComeInStreamOrder) {
  ScratchDir dir;
  std::string gz = BigLayer(dir, Compression::kGzip);
  auto [one, pipe] = Both(gz + NoiseBytes(4 << 20, 5), SIZE_MAX, gz.size() + (2 << 20));
  EXPECT_EQ(one, "integrity: blob: trailing data after the gzip stream");
  EXPECT_EQ(pipe, one);
}

TEST(DigestPipeline, NoSpareCoreStaysOnOneThread) {
  ScratchDir dir;
  std::string gz = BigLayer(dir, Compression::kGzip);
  CoreBudget none(0);
  TestReader r(gz, nullptr);
  auto d = DigestLayer(r, "blob", true, &none);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(none.spare(), 0);
}

}  // namespace
}  // namespace imgtool::archive
