// The parts under a docker-archive: the tar index (offsets behind every header dialect,
// hostile names), manifest.json (types, caps) and InflateReader (gzip, zstd, damage).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/inflate_reader.h"
#include "oci/list_limit.h"
#include "tarball/manifest_json.h"
#include "tarball/tar_index.h"
#include "tarball/tarball_test_util.h"

namespace imgtool::tarball {

namespace {

using testing::File;
using testing::Link;
using testing::ScratchDir;
using testing::TarEntry;
using testing::WriteTar;

Result<TarIndex> IndexOf(const std::string& path) {
  fs::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st;
  ::fstat(fd.get(), &st);
  return TarIndex::Read(fd.get(), static_cast<uint64_t>(st.st_size), "t.tar");
}

std::string ContentAt(const std::string& path, const TarMember& m) {
  std::string all = archive::testing::ReadAll(path);
  return all.substr(m.offset, m.size);
}

std::string Refusal(const std::vector<TarEntry>& entries) {
  ScratchDir dir;
  auto index = IndexOf(WriteTar(dir / "t.tar", entries));
  return index.ok() ? "accepted" : index.error().message;
}

}  // namespace

TEST(CleanMemberName, AsGoPathCleanInsideTheArchive) {
  EXPECT_EQ(CleanMemberName("a/b"), "a/b");
  EXPECT_EQ(CleanMemberName("./a//b/"), "a/b");
  EXPECT_EQ(CleanMemberName("a/../b"), "b");
  EXPECT_EQ(CleanMemberName("./"), ".");
  EXPECT_EQ(CleanMemberName("a/.."), ".");
  EXPECT_EQ(CleanMemberName("../a"), "");
  EXPECT_EQ(CleanMemberName("a/../../b"), "");
  EXPECT_EQ(CleanMemberName("/etc/passwd"), "");
  EXPECT_EQ(CleanMemberName(""), "");
}

// Each member's offset is where its content starts, whatever headers come before it:
// ustar, pax extended headers (long and non-ASCII names), GNU long-name headers.
TEST(TarIndex, OffsetsPointAtTheContentInEveryDialect) {
  const std::string long_name = std::string(150, 'n') + "/layer.tar";
  for (int format : {ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE, ARCHIVE_FORMAT_TAR_GNUTAR,
                     ARCHIVE_FORMAT_TAR_USTAR}) {
    SCOPED_TRACE(format);
    ScratchDir dir;
    std::vector<TarEntry> entries = {File("manifest.json", "[]"), File("b/c.json", std::string(1000, 'c')),
                                     File("empty", ""), File("last", "the end")};
    if (format != ARCHIVE_FORMAT_TAR_USTAR) entries.insert(entries.begin() + 1, File(long_name, "long"));
    if (format != ARCHIVE_FORMAT_TAR_USTAR) entries.push_back(File("caf\xc3\xa9.json", "utf8"));
    std::string path = WriteTar(dir / "t.tar", entries, format);
    auto index = IndexOf(path);
    ASSERT_TRUE(index.ok()) << index.error().message;
    EXPECT_EQ(index->size(), entries.size());
    for (const auto& e : entries) {
      auto m = index->File(e.name, false);
      ASSERT_TRUE(m.ok()) << e.name << ": " << m.error().message;
      EXPECT_EQ(ContentAt(path, *m), e.content) << e.name;
    }
  }
}

TEST(TarIndex, SymlinksResolveByNameOneHop) {
  ScratchDir dir;
  std::string path =
      WriteTar(dir / "t.tar", {File("blobs/sha256/aa", "layer"), Link("id/layer.tar", "../blobs/sha256/aa"),
                               Link("twice", "id/layer.tar"), testing::Other("folder", AE_IFDIR)});
  auto index = IndexOf(path);
  ASSERT_TRUE(index.ok()) << index.error().message;
  auto via = index->File("id/layer.tar", true);
  ASSERT_TRUE(via.ok()) << via.error().message;
  EXPECT_EQ(ContentAt(path, *via), "layer");
  EXPECT_EQ(index->File("id/layer.tar", false).error().message, "t.tar: 'id/layer.tar' is not a regular file");
  EXPECT_EQ(index->File("twice", true).error().message, "t.tar: 'id/layer.tar' is not a regular file");
  EXPECT_EQ(index->File("folder", true).error().message, "t.tar: 'folder' is not a regular file");
  EXPECT_EQ(index->File("nothing", true).error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(index->File("../x", true).error().message, "t.tar: '../x' names nothing inside the archive");
}

TEST(TarIndex, HostileMembersRefuseTheArchive) {
  EXPECT_EQ(Refusal({File("../../evil", "x")}), "t.tar: member '../../evil' lies outside the archive; refusing it");
  EXPECT_EQ(Refusal({File("/etc/passwd", "x")}), "t.tar: member '/etc/passwd' lies outside the archive; refusing it");
  EXPECT_EQ(Refusal({File("a", "1"), File("./a", "2")}),
            "t.tar: member 'a' appears twice; refusing an ambiguous archive");
  EXPECT_EQ(Refusal({Link("l", "../../etc/shadow")}),
            "t.tar: symlink 'l' -> '../../etc/shadow' leads outside the archive");
  EXPECT_EQ(Refusal({Link("l", "/etc/shadow")}), "t.tar: symlink 'l' -> '/etc/shadow' leads outside the archive");
  EXPECT_EQ(Refusal({File("a", "1"), {"h", "", AE_IFREG, "a"}}),
            "t.tar: member 'h' is a hardlink; a docker-archive holds files, folders and symlinks");
  EXPECT_EQ(Refusal({testing::Other("fifo", AE_IFIFO)}),
            "t.tar: member 'fifo' is a device, FIFO or socket; a docker-archive holds files, folders and symlinks");
  EXPECT_EQ(Refusal({File("x\n\x1b[2Jok", "1"), File("x\n\x1b[2Jok", "2")}),
            "t.tar: member 'x\\n\\x1b[2Jok' appears twice; refusing an ambiguous archive");
}

TEST(TarIndex, TruncatedAndForeignFilesAreNamed) {
  ScratchDir dir;
  std::string path = WriteTar(dir / "t.tar", {File("big", std::string(100000, 'b'))});
  ASSERT_EQ(::truncate(path.c_str(), 50000), 0);
  auto cut = IndexOf(path);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().kind, ErrorKind::kIntegrity);
  EXPECT_EQ(cut.error().message, "t.tar: member 'big' runs past the end of the archive (truncated?)");
  auto noise = IndexOf(dir.Put("noise", archive::testing::NoiseBytes(4096, 1)));
  ASSERT_FALSE(noise.ok());
  EXPECT_EQ(noise.error().kind, ErrorKind::kInvalidInput);
  EXPECT_NE(noise.error().message.find("t.tar: not a tar archive"), std::string::npos) << noise.error().message;
}

TEST(ManifestJson, ReadsWhatDockerAndSkopeoWrite) {
  auto images = ParseManifestJson(
      R"([{"Config":"c.json","RepoTags":["app:v1"],"Layers":["a/layer.tar","b.tar"],"Parent":"x","LayerSources":{}},)"
      R"({"Config":"blobs/sha256/cc","RepoTags":null,"Layers":[]}])");
  ASSERT_TRUE(images.ok()) << images.error().message;
  ASSERT_EQ(images->size(), 2u);
  EXPECT_EQ((*images)[0].config, "c.json");
  EXPECT_EQ((*images)[0].repo_tags, std::vector<std::string>{"app:v1"});
  EXPECT_EQ((*images)[0].layers, (std::vector<std::string>{"a/layer.tar", "b.tar"}));
  EXPECT_TRUE((*images)[1].repo_tags.empty());
  auto again = ParseManifestJson(*ManifestJsonBytes(*images));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[0].layers, (*images)[0].layers);
}

TEST(ManifestJson, RefusesWhatIsNotOne) {
  auto why = [](std::string_view text) {
    auto r = ParseManifestJson(text);
    return r.ok() ? std::string("accepted") : r.error().message;
  };
  EXPECT_EQ(why("{}"), "manifest.json: not a list of images");
  EXPECT_EQ(why("[1]"), "manifest.json image @0: not an object");
  EXPECT_EQ(why(R"([{"Layers":[]}])"), "manifest.json image @0: Config is missing or not a member name");
  EXPECT_EQ(why(R"([{"Config":""}])"), "manifest.json image @0: Config is missing or not a member name");
  EXPECT_EQ(why(R"([{"Config":"c","Layers":"x"}])"), "manifest.json image @0: Layers is not a list");
  EXPECT_EQ(why(R"([{"Config":"c","RepoTags":[1]}])"),
            "manifest.json image @0: RepoTags holds something that is not a string");
  EXPECT_NE(why(R"([{"Config":"c","Config":"d"}])").find("duplicate"), std::string::npos);
  EXPECT_NE(why(std::string(200, '[') + std::string(200, ']')).find("nested deeper than 128 levels"),
            std::string::npos);
}

// Every list is capped before it is walked: 1,001 images, layers or tags are refused.
TEST(ManifestJson, ListsAreCapped) {
  auto list = [](const std::string& item, size_t n) {
    std::string s = "[";
    for (size_t i = 0; i < n; ++i) s += (i ? "," : "") + item;
    return s + "]";
  };
  const std::string cap = std::to_string(oci::kMaxListEntries);
  auto images = ParseManifestJson(list(R"({"Config":"c"})", oci::kMaxListEntries + 1));
  ASSERT_FALSE(images.ok());
  EXPECT_NE(images.error().message.find("manifest.json: 1001 images; imgtool reads at most " + cap), std::string::npos)
      << images.error().message;
  auto layers = ParseManifestJson(R"([{"Config":"c","Layers":)" + list(R"("l")", oci::kMaxListEntries + 1) + "}]");
  ASSERT_FALSE(layers.ok());
  EXPECT_NE(layers.error().message.find("manifest.json image @0: Layers: 1001 entries"), std::string::npos)
      << layers.error().message;
  auto tags = ParseManifestJson(R"([{"Config":"c","RepoTags":)" + list(R"("a:1")", oci::kMaxListEntries + 1) + "}]");
  ASSERT_FALSE(tags.ok());
  EXPECT_TRUE(ParseManifestJson(list(R"({"Config":"c"})", oci::kMaxListEntries)).ok());
  EXPECT_EQ(ParseManifestJson(std::string(kMaxManifestJsonBytes + 1, ' ')).error().message,
            "manifest.json: larger than 1 MiB; refusing it");
}

namespace {

Result<std::string> Inflate(const std::string& bytes, size_t read_size, archive::Compression* seen = nullptr) {
  auto in = archive::InflateReader(std::make_unique<oci::StringReader>(bytes), "blob");
  if (!in.ok()) return in.error();
  if (seen) *seen = in->compression;
  std::string out, buf(read_size, '\0');
  for (;;) {
    auto got = in->reader->Read(buf.data(), buf.size());
    if (!got.ok()) return got.error();
    if (*got == 0) return out;
    out.append(buf.data(), *got);
  }
}

}  // namespace

TEST(InflateReader, GzipZstdAndPlainComeOutAsTheTar) {
  ScratchDir dir;
  std::string text = archive::testing::NoiseBytes(300000, 7) + std::string(2 << 20, 'z');
  auto plain = testing::MakeLayer(dir, text, archive::Compression::kNone);
  auto gz = testing::MakeLayer(dir, text, archive::Compression::kGzip);
  auto zst = testing::MakeLayer(dir, text, archive::Compression::kZstd);
  for (size_t read_size : {size_t{1}, size_t{4096}, size_t{3} << 20}) {
    SCOPED_TRACE(read_size);
    archive::Compression c;
    EXPECT_EQ(*Inflate(gz.bytes, read_size, &c), plain.bytes);
    EXPECT_EQ(c, archive::Compression::kGzip);
    EXPECT_EQ(*Inflate(zst.bytes, read_size, &c), plain.bytes);
    EXPECT_EQ(c, archive::Compression::kZstd);
    EXPECT_EQ(*Inflate(plain.bytes, read_size, &c), plain.bytes);
    EXPECT_EQ(c, archive::Compression::kNone);
  }
  // gzip members back to back read as one stream, each checked.
  EXPECT_EQ(*Inflate(gz.bytes + gz.bytes, 65536), plain.bytes + plain.bytes);
  EXPECT_EQ(*Inflate("", 10), "");
}

TEST(InflateReader, DamageIsAnIntegrityErrorNamingTheBlob) {
  ScratchDir dir;
  auto gz = testing::MakeLayer(dir, archive::testing::NoiseBytes(100000, 3), archive::Compression::kGzip);
  auto zst = testing::MakeLayer(dir, archive::testing::NoiseBytes(100000, 3), archive::Compression::kZstd);
  auto fails = [](const std::string& bytes) {
    auto r = Inflate(bytes, 65536);
    EXPECT_FALSE(r.ok());
    return r.ok() ? ErrorKind::kInternal : r.error().kind;
  };
  EXPECT_EQ(fails(gz.bytes.substr(0, gz.bytes.size() / 2)), ErrorKind::kIntegrity);
  EXPECT_EQ(Inflate(gz.bytes.substr(0, gz.bytes.size() / 2), 65536).error().message, "blob: truncated gzip stream");
  EXPECT_EQ(Inflate(gz.bytes + "junk", 65536).error().message, "blob: trailing data after the gzip stream");
  std::string crc = gz.bytes;
  crc[crc.size() - 6] ^= 1;  // the CRC32 in the trailer
  EXPECT_EQ(Inflate(crc, 65536).error().message, "blob: corrupt gzip stream (CRC32 or length mismatch)");
  EXPECT_EQ(fails(zst.bytes.substr(0, zst.bytes.size() / 2)), ErrorKind::kIntegrity);
  EXPECT_EQ(Inflate(zst.bytes.substr(0, zst.bytes.size() / 2), 65536).error().message, "blob: truncated zstd stream");
  EXPECT_EQ(fails(zst.bytes + "junk"), ErrorKind::kIntegrity);
}

}  // namespace imgtool::tarball
