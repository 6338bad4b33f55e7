// Reading layers back: ListLayer round trips what WriteLayer wrote, DigestLayerBlob
// catches damaged blobs, ReadFileFromLayer finds files in foreign (GNU tar) layers too.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "archive/archive_test_util.h"
#include "archive/layer.h"

namespace imgtool::archive {
namespace {

using testing::Dir;
using testing::FromFile;
using testing::Hardlink;
using testing::Inline;
using testing::NoiseBytes;
using testing::ReadAll;
using testing::ScratchDir;
using testing::Symlink;
using testing::WriteBlob;

const std::string kLongName = "opt/" + std::string(120, 'n') + "/" + std::string(140, 'm');
const std::string kLongTarget = "../" + std::string(200, 't');

std::vector<Entry> RoundTripEntries(const ScratchDir& dir) {
  Entry exe = FromFile("bin/tool", dir.Put("tool", NoiseBytes((1 << 20) + 77, 9)));
  exe.mode = 04755;
  exe.uid = 0;
  exe.gid = 7;
  Entry secret = Inline("etc/shadow", "root:*:1::::::\n", 0640);
  secret.gid = 42;
  Entry user = Inline("home/u/notes", "hello\n", 0600);
  user.uid = 1000;
  user.gid = 1000;
  return {
      Dir("bin"),
      exe,
      Hardlink("bin/tool2", "bin/tool"),
      Dir("etc"),
      Inline("etc/passwd", "root:x:0:0::/root:/bin/sh\n"),
      Symlink("etc/rc", "/etc/init.d/rc"),
      secret,
      Inline("etc/\xc3\xa9t\xc3\xa9", "non-ASCII name, stored as raw bytes\n"),
      Dir("home", 0755),
      Dir("home/u", 0700),
      user,
      Dir("opt"),
      Symlink("opt/far", kLongTarget),
      Dir("opt/" + std::string(120, 'n')),
      Inline(kLongName, "long\n"),
      Dir("tmp", 01777),
  };
}

class ReaderTest : public ::testing::TestWithParam<Compression> {};

TEST_P(ReaderTest, ListLayerRoundTripsEveryField) {
  ScratchDir dir;
  auto entries = RoundTripEntries(dir);
  auto layer = WriteBlob(dir / "blob", entries, GetParam(), 1234567890);
  ASSERT_TRUE(layer.ok()) << layer.error().message;
  auto files = ListLayer(dir / "blob");
  ASSERT_TRUE(files.ok()) << files.error().message;
  ASSERT_EQ(files->size(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    const LayerFile& f = (*files)[i];
    EXPECT_EQ(f.path, e.path);
    EXPECT_EQ(f.type, e.type) << e.path;
    EXPECT_EQ(f.mode, e.mode) << e.path;
    EXPECT_EQ(f.uid, e.uid) << e.path;
    EXPECT_EQ(f.gid, e.gid) << e.path;
    EXPECT_EQ(f.mtime, 1234567890) << e.path;
    EXPECT_EQ(f.link_target, e.link_target) << e.path;
    if (e.type == EntryType::kFile) {
      EXPECT_EQ(f.size, e.source.empty() ? e.content.size() : e.size) << e.path;
      EXPECT_EQ(f.content_digest, layer->file_digests[i]) << e.path;
    } else {
      EXPECT_TRUE(f.content_digest.empty()) << e.path;
    }
  }
}

TEST_P(ReaderTest, ReadFileFromLayer) {
  ScratchDir dir;
  auto entries = RoundTripEntries(dir);
  auto layer = WriteBlob(dir / "blob", entries, GetParam());
  ASSERT_TRUE(layer.ok()) << layer.error().message;
  auto passwd = ReadFileFromLayer(dir / "blob", "etc/passwd");
  ASSERT_TRUE(passwd.ok()) << passwd.error().message;
  EXPECT_EQ(*passwd, "root:x:0:0::/root:/bin/sh\n");
  // Leading "/" or "./" in the question is fine.
  auto long_name = ReadFileFromLayer(dir / "blob", "/" + kLongName);
  ASSERT_TRUE(long_name.ok());
  EXPECT_EQ(*long_name, "long\n");
  // A hardlink is followed to its target's content.
  auto linked = ReadFileFromLayer(dir / "blob", "./bin/tool2", 2 << 20);
  ASSERT_TRUE(linked.ok()) << linked.error().message;
  EXPECT_EQ(*linked, ReadAll(entries[1].source));

  auto missing = ReadFileFromLayer(dir / "blob", "etc/group");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(missing.error().message, (dir / "blob") + ": no file etc/group");
  auto big = ReadFileFromLayer(dir / "blob", "bin/tool", 1 << 20);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().message, (dir / "blob") + ": bin/tool: larger than 1048576 bytes");
  auto folder = ReadFileFromLayer(dir / "blob", "etc");
  ASSERT_FALSE(folder.ok());
  EXPECT_EQ(folder.error().message, (dir / "blob") + ": etc: not a regular file");
}

TEST_P(ReaderTest, TruncatedBlobIsAnIntegrityError) {
  ScratchDir dir;
  auto layer = WriteBlob(dir / "blob", RoundTripEntries(dir), GetParam());
  ASSERT_TRUE(layer.ok()) << layer.error().message;
  std::string bytes = ReadAll(dir / "blob");
  dir.Put("cut", bytes.substr(0, bytes.size() / 2));
  auto listed = ListLayer(dir / "cut");
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().kind, ErrorKind::kIntegrity);
  EXPECT_EQ(listed.error().message.rfind(dir / "cut", 0), 0u) << listed.error().message;
}

INSTANTIATE_TEST_SUITE_P(AllCompressions, ReaderTest,
                         ::testing::Values(Compression::kGzip, Compression::kZstd, Compression::kNone),
                         [](const auto& info) {
                           switch (info.param) {
                             case Compression::kGzip:
                               return std::string("gzip");
                             case Compression::kZstd:
                               return std::string("zstd");
                             case Compression::kNone:
                               break;
                           }
                           return std::string("none");
                         });

// Writes a gzip or zstd layer of RoundTripEntries and returns its bytes.
std::string Blob(const ScratchDir& dir, Compression c) {
  auto layer = WriteBlob(dir / "good", RoundTripEntries(dir), c);
  EXPECT_TRUE(layer.ok()) << layer.error().message;
  return ReadAll(dir / "good");
}

Error DigestError(const std::string& path) {
  auto d = DigestLayerBlob(path);
  EXPECT_FALSE(d.ok()) << path;
  return d.ok() ? Error{} : d.error();
}

TEST(DigestLayerBlob, TruncatedGzip) {
  ScratchDir dir;
  std::string gz = Blob(dir, Compression::kGzip);
  for (size_t keep : {gz.size() / 2, gz.size() - 4, size_t{5}}) {
    std::string cut = dir.Put("cut", gz.substr(0, keep));
    Error e = DigestError(cut);
    EXPECT_EQ(e.kind, ErrorKind::kIntegrity);
    EXPECT_EQ(e.message, cut + ": truncated gzip stream") << keep;
  }
}

TEST(DigestLayerBlob, CorruptGzip) {
  ScratchDir dir;
  std::string gz = Blob(dir, Compression::kGzip);
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 6] ^= 0x01;
  EXPECT_EQ(DigestError(dir.Put("crc", bad_crc)).message,
            (dir / "crc") + ": corrupt gzip stream (CRC32 or length mismatch)");
  EXPECT_EQ(DigestError(dir.Put("tail", gz + "junk")).message,
            (dir / "tail") + ": trailing data after the gzip stream");
  std::string flipped = gz;
  flipped[gz.size() / 2] ^= 0x5a;
  Error e = DigestError(dir.Put("flip", flipped));
  EXPECT_EQ(e.kind, ErrorKind::kIntegrity);
  EXPECT_EQ(e.message.rfind((dir / "flip") + ": corrupt gzip stream", 0), 0u) << e.message;
}

TEST(DigestLayerBlob, TruncatedZstd) {
  ScratchDir dir;
  std::string zst = Blob(dir, Compression::kZstd);
  std::string cut = dir.Put("cut", zst.substr(0, zst.size() - 3));
  Error e = DigestError(cut);
  EXPECT_EQ(e.kind, ErrorKind::kIntegrity);
  EXPECT_EQ(e.message, cut + ": truncated zstd stream");
}

TEST(DigestLayerBlob, MultiMemberGzipFromGnuGzip) {
  ScratchDir dir;
  std::string a = dir.Put("a", NoiseBytes(200000, 1));
  std::string b = dir.Put("b", std::string(300000, 'z'));
  std::string cmd =
      "gzip -c '" + a + "' > '" + (dir / "ab.gz") + "' && gzip -9 -c '" + b + "' >> '" + (dir / "ab.gz") + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto d = DigestLayerBlob(dir / "ab.gz");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->diff_id, oci::Digest::Of(ReadAll(a) + ReadAll(b)));
  EXPECT_EQ(d->uncompressed_size, 500000u);
  EXPECT_EQ(d->digest, oci::Digest::Of(ReadAll(dir / "ab.gz")));
}

TEST(DigestLayerBlob, MissingBlobIsNotFound) {
  auto d = DigestLayerBlob("/nonexistent/imgtool/blob");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().kind, ErrorKind::kNotFound);
  auto l = ListLayer("/nonexistent/imgtool/blob");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.error().kind, ErrorKind::kNotFound);
}

TEST(ForeignLayers, GnuTarLayerWithDotSlashNamesAndDuplicates) {
  // Base images come from other tools: "./" prefixes, a root entry, and the same path
  // twice (extraction keeps the last one).
  ScratchDir dir;
  dir.Put("v1/etc/passwd", "old\n");
  dir.Put("v2/etc/passwd", "new\n");
  std::string cmd = "tar --format=gnu -czf '" + (dir / "l.tgz") + "' -C '" + (dir / "v1") + "' . -C '" + (dir / "v2") +
                    "' ./etc/passwd";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto files = ListLayer(dir / "l.tgz");
  ASSERT_TRUE(files.ok()) << files.error().message;
  std::vector<std::string> paths;
  for (const LayerFile& f : *files) paths.push_back(f.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"etc", "etc/passwd", "etc/passwd"}));
  auto passwd = ReadFileFromLayer(dir / "l.tgz", "etc/passwd");
  ASSERT_TRUE(passwd.ok()) << passwd.error().message;
  EXPECT_EQ(*passwd, "new\n");
}

TEST(ForeignLayers, Utf8PaxNamesComeBackAsStored) {
  // GNU tar under a UTF-8 locale writes a pax "path" in UTF-8 without hdrcharset; our
  // reader runs in the "C" locale and must hand back the same bytes, not a conversion.
  ScratchDir dir;
  const std::string name = "etc/caf\xc3\xa9-" + std::string(100, 'x');
  dir.Put("t/" + name, "hi\n");
  std::string cmd =
      "LC_ALL=C.UTF-8 tar --format=pax -cf '" + (dir / "l.tar") + "' -C '" + (dir / "t") + "' '" + name + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto files = ListLayer(dir / "l.tar");
  ASSERT_TRUE(files.ok()) << files.error().message;
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].path, name);
  EXPECT_EQ((*files)[0].content_digest, oci::Digest::Of("hi\n"));
}

TEST(MediaTypes, NamesAndMediaTypesMapBothWays) {
  for (Compression c : {Compression::kGzip, Compression::kZstd, Compression::kNone}) {
    auto back = CompressionFromMediaType(LayerMediaType(c));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, c);
  }
  EXPECT_EQ(LayerMediaType(Compression::kZstd), "application/vnd.oci.image.layer.v1.tar+zstd");
  EXPECT_EQ(*CompressionFromMediaType("application/vnd.docker.image.rootfs.diff.tar.gzip"), Compression::kGzip);
  EXPECT_EQ(*CompressionFromName("none"), Compression::kNone);
  auto bad = CompressionFromName("xz");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "unknown compression \"xz\" (want gzip, zstd or none)");
  EXPECT_FALSE(CompressionFromMediaType("application/vnd.oci.image.layer.v1.tar+xz").ok());
}

}  // namespace
}  // namespace imgtool::archive
