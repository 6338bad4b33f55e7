#include "data/idx.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>

namespace trainer {
namespace {

std::string Header(uint8_t type, const std::vector<uint32_t>& dims) {
  std::string s = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int k = 3; k >= 0; --k) s.push_back(static_cast<char>((d >> (8 * k)) & 0xff));
  }
  return s;
}

std::string WriteGz(const std::string& name, const std::string& bytes) {
  std::string path = (std::filesystem::temp_directory_path() / name).string();
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
  return path;
}

TEST(Idx, ParsesValidFile) {
  auto a = ParseIdx(Header(8, {2, 3}) + "abcdef", 2, "x");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->dims, (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(a->data.size(), 6u);
  EXPECT_EQ(a->data[5], 'f');
}

TEST(Idx, RejectsBadFilesNamingThem) {
  EXPECT_EQ(ParseIdx("PK\3\4zzzz", 1, "f.gz").error().message, "f.gz: bad magic number: not an IDX file");
  EXPECT_EQ(ParseIdx(Header(8, {4}) + "abc", 1, "f.gz").error().message,
            "f.gz: truncated: payload has 3 bytes, dimensions need 4");
  EXPECT_EQ(ParseIdx(Header(8, {2}) + "abc", 1, "f.gz").error().message,
            "f.gz: has 1 trailing bytes after the payload");
  EXPECT_EQ(ParseIdx(Header(8, {2, 1}) + "ab", 3, "f.gz").error().message, "f.gz: has 2 dimensions, expected 3");
  EXPECT_EQ(ParseIdx("", 1, "f.gz").error().message, "f.gz: truncated: 0 bytes, no IDX header");
}

TEST(Idx, ReadsGzipAndReportsCorruption) {
  std::string good = WriteGz("trainer_idx_good.gz", Header(8, {3}) + "xyz");
  auto a = ReadIdxGz(good, 1);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->data.size(), 3u);

  // A gzip stream cut in half.
  std::string big = Header(8, {100000}) + std::string(100000, 'q');
  std::string full = WriteGz("trainer_idx_cut.gz", big);
  std::filesystem::resize_file(full, std::filesystem::file_size(full) / 2);
  auto cut = ReadIdxGz(full, 1);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().kind, ErrorKind::kIntegrity);
  EXPECT_EQ(cut.error().message.rfind(full + ": ", 0), 0u) << cut.error().message;

  auto missing = ReadIdxGz("/nonexistent/train-images-idx3-ubyte.gz", 3);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(missing.error().message, "/nonexistent/train-images-idx3-ubyte.gz: cannot open: No such file or directory");
}

}  // namespace
}  // namespace trainer
