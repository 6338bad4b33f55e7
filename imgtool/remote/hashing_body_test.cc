// HashingBody: the bytes handed out are the bytes hashed, in order, whatever the slot
// sizes and read sizes; a range sent again is not hashed twice; Check refuses a source
// that is shorter, longer or other than the descriptor, and one whose reads fail.
#include "remote/hashing_body.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

namespace imgtool::remote {
namespace {

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 7) & 0xff);
  return s;
}

oci::Descriptor DescOf(const std::string& bytes) {
  return oci::Descriptor{
      "application/octet-stream", oci::Digest::Of(bytes), static_cast<int64_t>(bytes.size()), {}, std::nullopt};
}

// Reads `body` from `from` to the end in pieces of `step`, as curl's read callback does.
std::string ReadOut(HashingBody& body, uint64_t from, size_t step) {
  std::string out;
  std::string buf(step, '\0');
  for (uint64_t off = from;;) {
    auto got = body.ReadAt(off, buf.data(), buf.size());
    EXPECT_TRUE(got.ok()) << got.error().message;
    if (!got.ok() || *got == 0) break;
    out.append(buf.data(), *got);
    off += *got;
  }
  return out;
}

TEST(HashingBody, HandsOutAndHashesEveryByteOnceWhateverTheSizes) {
  const std::string blob = Pattern(100003);
  for (size_t slot : {1ul, 7ul, 4096ul, 1ul << 20}) {
    for (size_t step : {1ul, 333ul, 65536ul}) {
      if (slot == 1 && step == 1) continue;  // 100k single-byte handovers: slow, no new case
      oci::StringReader src(blob);
      HashingBody body(src, blob.size(), slot, 3);
      EXPECT_EQ(ReadOut(body, 0, step), blob) << slot << " " << step;
      EXPECT_TRUE(body.Check(DescOf(blob), "blob").ok()) << slot << " " << step;
    }
  }
}

TEST(HashingBody, RangeSentAgainIsReadFromTheSourceAndNotHashedTwice) {
  const std::string blob = Pattern(5000);
  oci::StringReader src(blob);
  HashingBody body(src, blob.size(), 256, 2);
  std::string first(3000, '\0');
  ASSERT_EQ(*body.ReadAt(0, first.data(), first.size()), 3000u);
  std::string again(1000, '\0');  // a reset: the registry stood at 1500
  ASSERT_EQ(*body.ReadAt(1500, again.data(), again.size()), 1000u);
  EXPECT_EQ(again, blob.substr(1500, 1000));
  // Reaching the frontier mid-read returns the part below it; the next read continues.
  ASSERT_EQ(*body.ReadAt(2500, again.data(), again.size()), 500u);
  EXPECT_EQ(ReadOut(body, 3000, 700), blob.substr(3000));
  EXPECT_TRUE(body.Check(DescOf(blob), "blob").ok());
}

TEST(HashingBody, CatchUpHashesWhatTheRegistryAlreadyHas) {
  const std::string blob = Pattern(9000);
  oci::StringReader src(blob);
  HashingBody body(src, blob.size(), 1024, 4);
  ASSERT_TRUE(body.CatchUp(4000).ok());
  EXPECT_EQ(ReadOut(body, 4000, 512), blob.substr(4000));
  EXPECT_TRUE(body.Check(DescOf(blob), "blob").ok());
  // A read beyond the frontier takes the gap first (hashed, not handed out).
  oci::StringReader src2(blob);
  HashingBody skip(src2, blob.size(), 1024, 4);
  EXPECT_EQ(ReadOut(skip, 6000, 512), blob.substr(6000));
  EXPECT_TRUE(skip.Check(DescOf(blob), "blob").ok());
}

TEST(HashingBody, RefusesOtherShorterAndLongerSources) {
  const std::string blob = Pattern(3000);
  std::string other = blob;
  other[2999] ^= 1;
  oci::StringReader a(other);
  HashingBody changed(a, blob.size(), 512, 2);
  ReadOut(changed, 0, 1000);
  auto st = changed.Check(DescOf(blob), "blob x");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::kIntegrity);
  EXPECT_EQ(st.error().message, "blob x: content hashes to " + oci::Digest::Of(other).str() + "; not committed");

  oci::StringReader b(blob.substr(0, 2000));
  HashingBody shorter(b, blob.size(), 512, 2);
  EXPECT_EQ(ReadOut(shorter, 0, 1000).size(), 2000u);  // then 0: the body ended early
  st = shorter.Check(DescOf(blob), "blob x");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            "blob x: the source holds fewer than the 3000 bytes its descriptor names; not committed");

  oci::StringReader c(blob + "!");
  HashingBody longer(c, blob.size(), 512, 2);
  EXPECT_EQ(ReadOut(longer, 0, 1000), blob);  // never more than the descriptor's size
  st = longer.Check(DescOf(blob), "blob x");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            "blob x: the source holds more than the 3000 bytes its descriptor names; not committed");
}

// A source whose bytes change between reads of the same offset (a concurrent writer):
// each offset is read once, into the slot both the sender and the hash see, so the
// check is of the bytes that were sent.
class Shifting : public oci::Reader {
 public:
  explicit Shifting(std::string bytes) : bytes_(std::move(bytes)) {}
  Result<size_t> Read(void*, size_t) override { return MakeError(ErrorKind::kInternal, "no"); }
  bool CanReadAt() const override { return true; }
  Result<size_t> ReadAt(uint64_t offset, void* buf, size_t n) override {
    if (offset >= bytes_.size()) return size_t{0};
    size_t k = std::min<size_t>(n, bytes_.size() - offset);
    std::memcpy(buf, bytes_.data() + offset, k);
    for (size_t i = 0; i < k; ++i) bytes_[offset + i] ^= 0x5a;  // the next read sees others
    return k;
  }

 private:
  std::string bytes_;
};

TEST(HashingBody, HashesTheBytesItHandedOutNotASecondRead) {
  const std::string blob = Pattern(4096);
  Shifting src(blob);
  HashingBody body(src, blob.size(), 1000, 2);
  EXPECT_EQ(ReadOut(body, 0, 300), blob);
  EXPECT_TRUE(body.Check(DescOf(blob), "blob").ok());
}

class Failing : public oci::Reader {
 public:
  Result<size_t> Read(void*, size_t) override { return MakeError(ErrorKind::kInternal, "no"); }
  bool CanReadAt() const override { return true; }
  Result<size_t> ReadAt(uint64_t offset, void* buf, size_t n) override {
    if (offset >= 2048) return MakeError(ErrorKind::kInternal, "read: Input/output error");
    std::memset(buf, 'a', std::min<size_t>(n, 2048 - offset));
    return std::min<size_t>(n, 2048 - offset);
  }
};

TEST(HashingBody, ASourceReadErrorReachesTheSender) {
  Failing src;
  HashingBody body(src, 10000, 1024, 2);
  std::string buf(4096, '\0');
  auto got = body.ReadAt(0, buf.data(), 2048);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 2048u);
  got = body.ReadAt(2048, buf.data(), buf.size());
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().message, "read: Input/output error");
}

TEST(HashingBody, StopsItsWorkerWhenDroppedMidway) {
  const std::string blob = Pattern(1 << 20);
  oci::StringReader src(blob);
  auto body = std::make_unique<HashingBody>(src, blob.size(), 4096, 4);
  std::string buf(100, '\0');
  ASSERT_TRUE(body->ReadAt(0, buf.data(), buf.size()).ok());
  body.reset();  // joins the worker, which waits for free slots
  SUCCEED();
}

}  // namespace
}  // namespace imgtool::remote
