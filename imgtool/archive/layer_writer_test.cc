// WriteLayer: byte-for-byte determinism, the tar and gzip rules of layer.h, and the
// errors a build must get (bad entry lists, files that change while being read).
#include <gtest/gtest.h>
#include <isa-l/crc.h>
#include <locale.h>
#include <unistd.h>

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

const std::string kLongDir(120, 'd');  // pushes paths past ustar's 100-byte name field

// A tree with every entry type, a name needing PAX, a non-ASCII name and files larger
// than one pipeline buffer.
std::vector<Entry> SampleEntries(const ScratchDir& dir) {
  std::string big = dir.Put("src/big.bin", NoiseBytes(3 << 20, 1));
  std::string text;
  for (int i = 0; i < 200000; ++i) text += "line " + std::to_string(i) + "\n";
  std::string log = dir.Put("src/app.log", text);
  std::string bin = dir.Put("src/bin/tool", "#!/bin/sh\necho hi\n");
  Entry suid = FromFile("usr/bin/tool", bin);
  suid.mode = 04755;
  suid.uid = 0;
  suid.gid = 50;
  Entry owned = Inline("home/u/.profile", "export X=1\n", 0600);
  owned.uid = 1000;
  owned.gid = 1000;
  Entry bigid = Inline("srv/bigid", "x");
  bigid.uid = 300000;  // beyond ustar's 7 octal digits: needs a PAX header
  return {
      Dir("etc"),
      Inline("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"),
      Dir("home"),
      Dir("home/u", 0700),
      owned,
      Dir("opt"),
      Dir("opt/" + kLongDir),
      Inline("opt/" + kLongDir + "/" + std::string(150, 'f'), "deep\n"),
      Dir("srv"),
      FromFile("srv/app.log", log),
      FromFile("srv/big.bin", big),
      Hardlink("srv/big.link", "srv/big.bin"),
      bigid,
      Inline("srv/caf\xc3\xa9.txt", "non-ascii name\n"),
      Symlink("srv/current", "app.log"),
      Symlink("srv/far", "/" + std::string(130, 't')),
      Dir("tmp", 01777),
      Dir("usr"),
      Dir("usr/bin"),
      suid,
  };
}

class WriterTest : public ::testing::TestWithParam<Compression> {};

TEST_P(WriterTest, SameEntriesGiveIdenticalBytes) {
  ScratchDir dir;
  auto entries = SampleEntries(dir);
  auto a = WriteBlob(dir / "a", entries, GetParam());
  auto b = WriteBlob(dir / "b", entries, GetParam());
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(ReadAll(dir / "a"), ReadAll(dir / "b"));
  EXPECT_EQ(a->digest, b->digest);
  EXPECT_EQ(a->digest, oci::Digest::Of(ReadAll(dir / "a")));
  EXPECT_EQ(a->size, ReadAll(dir / "a").size());
  EXPECT_EQ(a->media_type, LayerMediaType(GetParam()));
}

TEST_P(WriterTest, MtimeChangesTheDigest) {
  ScratchDir dir;
  auto entries = SampleEntries(dir);
  auto a = WriteBlob(dir / "a", entries, GetParam(), 1700000000);
  auto b = WriteBlob(dir / "b", entries, GetParam(), 1700000001);
  ASSERT_TRUE(a.ok() && b.ok()) << (a.ok() ? b : a).error().message;
  EXPECT_NE(a->digest, b->digest);
  EXPECT_NE(a->diff_id, b->diff_id);
  EXPECT_EQ(a->file_digests, b->file_digests);
}

TEST_P(WriterTest, BytesDoNotDependOnTheProcessLocale) {
  ScratchDir dir;
  auto entries = SampleEntries(dir);
  auto c = WriteBlob(dir / "c", entries, GetParam());
  ASSERT_NE(setlocale(LC_ALL, "C.UTF-8"), nullptr);
  auto utf8 = WriteBlob(dir / "utf8", entries, GetParam());
  setlocale(LC_ALL, "C");
  ASSERT_TRUE(c.ok() && utf8.ok());
  EXPECT_EQ(c->digest, utf8->digest);
}

TEST_P(WriterTest, DiffIdIsTheHashOfTheDecompressedTar) {
  ScratchDir dir;
  auto layer = WriteBlob(dir / "blob", SampleEntries(dir), GetParam());
  ASSERT_TRUE(layer.ok()) << layer.error().message;
  auto d = DigestLayerBlob(dir / "blob");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->digest, layer->digest);
  EXPECT_EQ(d->diff_id, layer->diff_id);
  EXPECT_EQ(d->uncompressed_size, layer->uncompressed_size);
  EXPECT_EQ(layer->uncompressed_size % 512, 0u);
  if (GetParam() == Compression::kNone) {
    EXPECT_EQ(layer->diff_id, layer->digest);
  }
}

TEST_P(WriterTest, GnuTarListsTheBlob) {
  ScratchDir dir;
  ASSERT_TRUE(WriteBlob(dir / "blob", SampleEntries(dir), GetParam()).ok());
  std::string cmd = "tar -tvf '" + (dir / "blob") + "' > '" + (dir / "listing") + "' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << ReadAll(dir / "listing");
  std::string listing = ReadAll(dir / "listing");
  EXPECT_NE(listing.find("opt/" + kLongDir + "/" + std::string(150, 'f')), std::string::npos) << listing;
  EXPECT_NE(listing.find("srv/big.link link to srv/big.bin"), std::string::npos) << listing;
  EXPECT_NE(listing.find("srv/current -> app.log"), std::string::npos) << listing;
  EXPECT_NE(listing.find("-rwsr-xr-x 0/50"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("PaxHeader"), std::string::npos) << listing;
}

INSTANTIATE_TEST_SUITE_P(AllCompressions, WriterTest,
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

TEST(WriteLayer, GzipHeaderAndTrailerAreFixed) {
  ScratchDir dir;
  auto layer = WriteBlob(dir / "blob", SampleEntries(dir), Compression::kGzip);
  ASSERT_TRUE(layer.ok()) << layer.error().message;
  std::string blob = ReadAll(dir / "blob");
  const std::string header("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", 10);
  EXPECT_EQ(blob.substr(0, 10), header);
  // Trailer: CRC32 and ISIZE (little endian) of the tar.
  ASSERT_EQ(std::system(("gzip -t '" + (dir / "blob") + "'").c_str()), 0);
  ASSERT_EQ(std::system(("zcat '" + (dir / "blob") + "' > '" + (dir / "tar") + "'").c_str()), 0);
  std::string tar = ReadAll(dir / "tar");
  EXPECT_EQ(oci::Digest::Of(tar), layer->diff_id);
  uint32_t crc = crc32_gzip_refl(0, reinterpret_cast<const unsigned char*>(tar.data()), tar.size());
  auto le32 = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(blob[at + i]);
    return v;
  };
  EXPECT_EQ(le32(blob.size() - 8), crc);
  EXPECT_EQ(le32(blob.size() - 4), static_cast<uint32_t>(tar.size()));
}

TEST(WriteLayer, FileDigestsAreIndexAligned) {
  ScratchDir dir;
  auto entries = SampleEntries(dir);
  auto layer = WriteBlob(dir / "blob", entries, Compression::kZstd);
  ASSERT_TRUE(layer.ok()) << layer.error().message;
  ASSERT_EQ(layer->file_digests.size(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.type != EntryType::kFile) {
      EXPECT_TRUE(layer->file_digests[i].empty()) << e.path;
    } else {
      std::string bytes = e.source.empty() ? e.content : ReadAll(e.source);
      EXPECT_EQ(layer->file_digests[i], oci::Digest::Of(bytes)) << e.path;
    }
  }
}

// File digests come from the hash stage, which reads each file from its spans of the
// tar pipe's buffers: a file cut by buffer edges, empty files, a run of small files
// sharing a buffer, inline content between them. Also: O_DIRECT or not, the same blob.
TEST(WriteLayer, FileDigestsAcrossBufferEdgesAndTheSameBlobWithoutODirect) {
  ScratchDir dir;
  std::vector<Entry> entries;
  entries.push_back(FromFile("a-big", dir.Put("big", NoiseBytes((3 << 20) + 777, 11))));
  entries.push_back(FromFile("b-empty", dir.Put("empty", "")));
  for (int i = 0; i < 300; ++i) {
    std::string name = "c" + std::to_string(1000 + i);
    entries.push_back(FromFile(name, dir.Put(name, NoiseBytes(size_t(i) * 97 % 5000, uint32_t(i)))));
  }
  Entry inline_file;
  inline_file.path = "d-inline";
  inline_file.content = "generated";
  entries.push_back(inline_file);
  entries.push_back(FromFile("e-odd", dir.Put("odd", NoiseBytes((1 << 20) - 5, 12))));
  for (Compression c : {Compression::kGzip, Compression::kZstd, Compression::kNone}) {
    auto layer = WriteBlob(dir / "blob", entries, c);
    ASSERT_TRUE(layer.ok()) << layer.error().message;
    for (size_t i = 0; i < entries.size(); ++i) {
      const Entry& e = entries[i];
      std::string bytes = e.source.empty() ? e.content : ReadAll(e.source);
      EXPECT_EQ(layer->file_digests[i], oci::Digest::Of(bytes)) << e.path;
    }
    std::string blob = ReadAll(dir / "blob");
    EXPECT_EQ(oci::Digest::Of(blob), layer->digest);
    fs::AtomicFile out;
    ASSERT_TRUE(out.Open(dir / "buffered").ok());
    LayerOptions options;
    options.compression = c;
    options.mtime = 1700000000;
    options.direct_write = false;
    auto again = WriteLayer(entries, options, out);
    ASSERT_TRUE(again.ok() && out.Commit().ok());
    EXPECT_EQ(ReadAll(dir / "buffered"), blob);
    EXPECT_EQ(again->file_digests, layer->file_digests);
  }
}

TEST(WriteLayer, EmptyLayerIsTwoZeroBlocks) {
  ScratchDir dir;
  auto layer = WriteBlob(dir / "blob", {}, Compression::kNone);
  ASSERT_TRUE(layer.ok());
  EXPECT_EQ(ReadAll(dir / "blob"), std::string(1024, '\0'));
}

TEST(WriteLayer, ProgressIsPeriodicAndEndsAtTotal) {
  ScratchDir dir;
  std::string big = dir.Put("big", NoiseBytes(130 << 20, 7));
  fs::AtomicFile out;
  ASSERT_TRUE(out.Open(dir / "blob").ok());
  LayerOptions options;
  options.compression = Compression::kNone;
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  options.progress = [&](uint64_t done, uint64_t total) { calls.emplace_back(done, total); };
  auto layer = WriteLayer({FromFile("big", big), Inline("small", "abc")}, options, out);
  ASSERT_TRUE(layer.ok());
  ASSERT_GE(calls.size(), 3u);
  EXPECT_LE(calls.size(), 5u);  // every 64 MiB, not every read
  EXPECT_EQ(calls.front(), std::make_pair(uint64_t{0}, uint64_t{(130u << 20) + 3}));
  EXPECT_EQ(calls.back(), std::make_pair(uint64_t{(130u << 20) + 3}, uint64_t{(130u << 20) + 3}));
}

Error WriteError(const std::vector<Entry>& entries) {
  ScratchDir dir;
  auto layer = WriteBlob(dir / "blob", entries, Compression::kGzip);
  EXPECT_FALSE(layer.ok());
  return layer.ok() ? Error{} : layer.error();
}

TEST(WriteLayer, RejectsBadEntryLists) {
  struct Case {
    std::vector<Entry> entries;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{Inline("b", ""), Inline("a", "")},
       "entry \"a\": not sorted: comes after \"b\" (entries must be sorted by path in byte order)"},
      {{Inline("a/b", ""), Inline("a-b", "")},
       "entry \"a-b\": not sorted: comes after \"a/b\" (entries must be sorted by path in byte "
       "order)"},
      {{Inline("a", ""), Inline("a", "")}, "entry \"a\": duplicate path"},
      {{Inline("usr/../etc/shadow", "")}, "entry \"usr/../etc/shadow\": \"..\" path component"},
      {{Inline("./etc", "")}, "entry \"./etc\": \".\" path component"},
      {{Inline("/etc/passwd", "")}, "entry \"/etc/passwd\": absolute path"},
      {{Dir("etc/")}, "entry \"etc/\": trailing \"/\""},
      {{Inline("a//b", "")}, "entry \"a//b\": empty path component"},
      {{Inline("", "")}, "entry 0: empty path"},
      {{Hardlink("a", "b")}, "entry \"a\": hardlink target \"b\" is not an earlier file in this layer"},
      {{Symlink("a", "")}, "entry \"a\": symlink without a target"},
  };
  for (const Case& c : cases) {
    Error e = WriteError(c.entries);
    EXPECT_EQ(e.kind, ErrorKind::kInvalidInput) << c.message;
    EXPECT_EQ(e.message, c.message);
  }
}

TEST(WriteLayer, FileThatChangedSizeIsAnIntegrityError) {
  ScratchDir dir;
  std::string src = dir.Put("f", "12345");
  Entry shrunk = FromFile("f", src);
  shrunk.size = 10;
  Error e = WriteError({shrunk});
  EXPECT_EQ(e.kind, ErrorKind::kIntegrity);
  EXPECT_EQ(e.message, src + ": changed while building (expected 10 bytes, read 5)");

  Entry grown = FromFile("f", dir.Put("g", NoiseBytes(3 << 20, 3)));
  grown.size = 1 << 20;
  e = WriteError({grown});
  EXPECT_EQ(e.kind, ErrorKind::kIntegrity);
  EXPECT_EQ(e.message, grown.source + ": changed while building (expected 1048576 bytes, read 3145728)");
}

// A source hashed earlier by another open (a lock, a RECORD) and rewritten since with the
// same size: the layer refuses the bytes it read instead of recording their digest.
TEST(WriteLayer, ContentOtherThanTheExpectedDigestIsAnIntegrityError) {
  ScratchDir dir;
  std::string src = dir.Put("f", "checked");
  Entry e = FromFile("f", src);
  e.expect_sha256 = oci::Digest::Of("checked");
  ScratchDir out;
  ASSERT_TRUE(WriteBlob(out / "ok", {e}, Compression::kGzip).ok());
  dir.Put("f", "swapped");
  Error err = WriteError({e});
  EXPECT_EQ(err.kind, ErrorKind::kIntegrity);
  EXPECT_EQ(err.message, src + ": changed while building (its content was " + oci::Digest::Of("checked").str() +
                             " when checked, the bytes read are " + oci::Digest::Of("swapped").str() + ")");
}

// Planning saw a regular file; a symlink swapped in since (to a key) is not followed.
TEST(WriteLayer, SourceSwappedForASymlinkIsRefused) {
  ScratchDir dir;
  std::string secret = dir.Put("secret", "0600 key!");
  std::string src = dir.Put("f", "plain ok!");
  Entry e = FromFile("f", src);
  ASSERT_EQ(::unlink(src.c_str()), 0);
  ASSERT_EQ(::symlink(secret.c_str(), src.c_str()), 0);
  Error err = WriteError({e});
  EXPECT_EQ(err.kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(err.message, src + ": is a symlink; refused");
}

// Below `source_root` nothing is followed: a folder planning walked, swapped for a
// symlink to another folder holding a file of the same name, is refused too.
TEST(WriteLayer, AFolderBelowTheSourceRootSwappedForASymlinkIsRefused) {
  ScratchDir dir;
  std::string src = dir.Put("root/sub/f", "plain ok!");
  dir.Put("elsewhere/f", "0600 key!");
  Entry e = FromFile("f", src);
  e.source_root = dir / "root";
  ScratchDir out;
  ASSERT_TRUE(WriteBlob(out / "ok", {e}, Compression::kGzip).ok());
  ASSERT_EQ(::rename((dir / "root/sub").c_str(), (dir / "sub.old").c_str()), 0);
  ASSERT_EQ(::symlink((dir / "elsewhere").c_str(), (dir / "root/sub").c_str()), 0);
  Error err = WriteError({e});
  EXPECT_EQ(err.kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(err.message, src + ": is a symlink; refused (only regular files inside it are read)");
}

TEST(WriteLayer, MissingSourceIsNotFound) {
  Entry e = Inline("f", "");
  e.source = "/nonexistent/imgtool/f";
  e.size = 1;
  e.content.clear();
  Error err = WriteError({e});
  EXPECT_EQ(err.kind, ErrorKind::kNotFound);
  EXPECT_EQ(err.message, "opening /nonexistent/imgtool/f: No such file or directory");
}

TEST(WriteLayer, OutputFailureStopsThePipeline) {
  // Never opened: every write fails. The layer is larger than the pipes, so a stage that
  // failed without telling the others would leave them blocked forever.
  for (Compression c : {Compression::kGzip, Compression::kZstd, Compression::kNone}) {
    fs::AtomicFile out;
    LayerOptions options;
    options.compression = c;
    auto layer = WriteLayer({Inline("big", NoiseBytes(40 << 20, 5))}, options, out);
    ASSERT_FALSE(layer.ok());
    EXPECT_EQ(layer.error().kind, ErrorKind::kInternal);
    EXPECT_EQ(layer.error().message.rfind("writing", 0), 0u) << layer.error().message;
  }
}

}  // namespace
}  // namespace imgtool::archive
