// The gzip encoder against zlib's decoder (an independent implementation), and the
// promise that its bytes depend on the input alone: not on threads, write sizes or CPU.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <string>
#include <vector>

#include "archive/compress.h"
#include "archive/deflate.h"
#include "archive/huffman.h"
#include "archive/parallel_gzip.h"
#include "oci/digest.h"

namespace imgtool::archive::internal {
namespace {

class VectorSink : public ByteSink {
 public:
  Status Write(const uint8_t* data, size_t len) override {
    bytes.insert(bytes.end(), data, data + len);
    return Status::Ok();
  }
  std::vector<uint8_t> bytes;
};

// Deterministic test data: xorshift noise, text, runs and repeats.
std::vector<uint8_t> Noise(size_t n, uint64_t seed) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    b = uint8_t(seed);
  }
  return v;
}
std::vector<uint8_t> Mixed(size_t n) {
  std::vector<uint8_t> v;
  std::vector<uint8_t> block = Noise(70000, 7);
  for (int i = 0; v.size() < n; ++i) {
    std::string line = "symbol_" + std::to_string(i * 7919 % 100000) + " = 0x00c0ffee;\n";
    v.insert(v.end(), line.begin(), line.end());
    if (i % 500 == 0) v.insert(v.end(), block.begin(), block.begin() + static_cast<std::ptrdiff_t>(i % 7) * 9000);
    if (i % 777 == 0) v.insert(v.end(), 5000 + i % 300, uint8_t(i));
  }
  v.resize(n);
  return v;
}

std::vector<uint8_t> Gzip(const std::vector<uint8_t>& in, int threads, size_t piece = 1 << 20) {
  VectorSink sink;
  auto c = NewCompressor(Compression::kGzip, sink, threads);
  EXPECT_TRUE(c.ok());
  for (size_t off = 0; off < in.size(); off += piece) {
    EXPECT_TRUE((*c)->Write(in.data() + off, std::min(piece, in.size() - off)).ok());
  }
  EXPECT_TRUE((*c)->Finish().ok());
  return sink.bytes;
}

// zlib inflate with gzip framing (CRC32 and ISIZE checked); the whole input must be used.
std::vector<uint8_t> Gunzip(const std::vector<uint8_t>& gz, size_t expected) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 16 + 15), Z_OK);
  std::vector<uint8_t> out(expected + 1);
  z.next_in = const_cast<uint8_t*>(gz.data());
  z.avail_in = uInt(gz.size());
  z.next_out = out.data();
  z.avail_out = uInt(out.size());
  int rc = inflate(&z, Z_FINISH);
  EXPECT_EQ(rc, Z_STREAM_END) << (z.msg ? z.msg : "");
  EXPECT_EQ(z.avail_in, 0u) << "trailing bytes after the gzip member";
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

TEST(Deflate, RoundTripsThroughZlib) {
  std::vector<std::vector<uint8_t>> inputs = {
      {}, {42}, {1, 2, 3}, std::vector<uint8_t>(5 << 20, 0), Noise(3 << 20, 1), Mixed(4500000)};
  for (const auto& in : inputs) {
    std::vector<uint8_t> gz = Gzip(in, 2);
    EXPECT_EQ(Gunzip(gz, in.size()), in) << in.size() << " bytes";
    EXPECT_EQ(std::memcmp(gz.data(), kGzipHeader, sizeof(kGzipHeader)), 0);
  }
}

TEST(Deflate, SameBytesForAnyThreadCountAndWriteSize) {
  std::vector<uint8_t> in = Mixed(5 << 20);
  std::vector<uint8_t> one = Gzip(in, 1);
  for (int threads : {2, 4, 8}) EXPECT_EQ(Gzip(in, threads), one) << threads << " threads";
  EXPECT_EQ(Gzip(in, 3, 7), one) << "7-byte writes";
  EXPECT_EQ(Gzip(in, 2, (1 << 20) + 3), one) << "writes across chunk boundaries";
}

TEST(Deflate, MatchesReachBackAcrossChunks) {
  // A 40 KiB block repeated: every chunk after the first finds it in its dictionary.
  std::vector<uint8_t> block = Noise(20 << 10, 3), in;
  while (in.size() < (6 << 20)) in.insert(in.end(), block.begin(), block.end());
  std::vector<uint8_t> gz = Gzip(in, 2);
  EXPECT_EQ(Gunzip(gz, in.size()), in);
  EXPECT_LT(gz.size(), in.size() / 50) << "chunks were not primed with the previous 32 KiB";
}

TEST(Deflate, IncompressibleDataIsStored) {
  std::vector<uint8_t> in = Noise(3 << 20, 9);
  std::vector<uint8_t> gz = Gzip(in, 2);
  EXPECT_LE(gz.size(), in.size() + in.size() / 1000 + 64);
}

// The format anchor: these bytes must not change without bumping kDeflateVersion (the
// build record names it), since every gzip layer digest changes with them. The same
// digest on every architecture is what makes a gzip layer reproducible across builders.
TEST(Deflate, OutputIsPinned) {
  std::vector<uint8_t> gz = Gzip(Mixed(3 << 20), 2);
  EXPECT_EQ(oci::Digest::Of(std::string_view(reinterpret_cast<const char*>(gz.data()), gz.size())).str(),
            "sha256:07c3ef84250988208a083a3d8571f87749ddb34c2a930b48e8ac52111c2e7db9")
      << "kDeflateVersion " << kDeflateVersion;
}

TEST(Zstd, SameBytesForAnyWorkerCount) {
  std::vector<uint8_t> in = Mixed(6 << 20);
  auto zstd = [&](int threads) {
    VectorSink sink;
    auto c = NewCompressor(Compression::kZstd, sink, threads);
    EXPECT_TRUE(c.ok() && (*c)->Write(in.data(), in.size()).ok() && (*c)->Finish().ok());
    return sink.bytes;
  };
  std::vector<uint8_t> one = zstd(1);
  EXPECT_EQ(zstd(2), one);
  EXPECT_EQ(zstd(5), one);
}

TEST(Huffman, LengthsAreLimitedAndComplete) {
  uint32_t freq[286] = {};
  uint32_t a = 1, b = 1;  // Fibonacci frequencies: the unlimited code is 30 levels deep
  for (int s = 0; s < 30; ++s) {
    freq[s] = a;
    uint32_t next = a + b;
    a = b;
    b = next;
  }
  uint8_t len[286];
  BuildCodeLengths(freq, 286, 15, len);
  double kraft = 0;
  for (int s = 0; s < 286; ++s) {
    EXPECT_LE(len[s], 15);
    EXPECT_EQ(len[s] > 0, freq[s] > 0) << s;
    if (len[s]) kraft += 1.0 / double(1u << len[s]);
  }
  EXPECT_DOUBLE_EQ(kraft, 1.0);
  uint32_t one[19] = {};
  one[5] = 10;  // one symbol used: two codes anyway
  uint8_t cl[19];
  BuildCodeLengths(one, 19, 7, cl);
  EXPECT_EQ(cl[5], 1);
  EXPECT_EQ(cl[0], 1);
}

}  // namespace
}  // namespace imgtool::archive::internal
