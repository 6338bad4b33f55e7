#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <functional>

#include "fs/atomic_file.h"
#include "layout/layout_reader.h"
#include "layout/layout_repository.h"
#include "layout/layout_sink.h"
#include "oci/memory_store.h"
#include "layout/layout_writer.h"
#include "oci/image_config.h"
#include "oci/media_types.h"

namespace imgtool::layout {

namespace {

// Writes a one-layer image (the "layer" is an arbitrary blob: layouts do not look inside).
oci::Descriptor WriteImage(LayoutWriter& w, const std::string& tag, const std::string& layer_bytes) {
  auto layer = w.WriteBlob(layer_bytes, oci::kMediaTypeLayerGzip);
  oci::Json cfg = oci::NewImageConfig("linux", "amd64");
  oci::AppendLayerToConfig(cfg, oci::Digest::Of(layer_bytes), {"1970-01-01T00:00:00Z", "t", false});
  auto config = w.WriteBlob(*oci::CanonicalJson(cfg), oci::kMediaTypeConfig);
  oci::Manifest m;
  m.config = *config;
  m.layers.push_back(*layer);
  auto manifest = w.WriteBlob(*oci::SerializeManifest(m), oci::kMediaTypeManifest);
  EXPECT_TRUE(w.SetTag(*manifest, tag).ok());
  return *manifest;
}

Result<oci::Node> Open(const std::string& dir, const std::string& tag) {
  return LayoutRepository(dir, "oci:" + dir, "img").Open(tag);
}

}  // namespace

TEST(Layout, WriteThenReadBack) {
  auto dir = fs::TempDir::Create("layout-test-");
  auto w = LayoutWriter::Open(dir->path() + "/img");
  ASSERT_TRUE(w.ok()) << w.error().message;
  auto desc = WriteImage(*w, "v1", "layer-bytes");
  EXPECT_EQ(*fs::ReadSmallFile(dir->path() + "/img/oci-layout"), R"({"imageLayoutVersion":"1.0.0"})");
  auto node = Open(dir->path() + "/img", "v1");
  ASSERT_TRUE(node.ok()) << node.error().message;
  ASSERT_TRUE(node->image);
  EXPECT_EQ(node->image->digest(), desc.digest);
  EXPECT_FALSE(node->image->is_artifact());
  ASSERT_EQ(node->image->layers().size(), 1u);
  EXPECT_EQ(node->image->layers()[0]->diff_id(), oci::Digest::Of("layer-bytes"));
  // The only image is found without a tag, and by digest.
  EXPECT_TRUE(Open(dir->path() + "/img", "").ok());
  EXPECT_TRUE(Open(dir->path() + "/img", desc.digest.str()).ok());
}

TEST(Layout, RetaggingReplacesAndOtherTagsStay) {
  auto dir = fs::TempDir::Create("layout-test-");
  auto w = LayoutWriter::Open(dir->path());
  WriteImage(*w, "a", "one");
  WriteImage(*w, "b", "two");
  auto second = WriteImage(*w, "a", "three");
  auto index = ReadIndex(dir->path());
  ASSERT_EQ(index->manifests.size(), 2u);
  EXPECT_EQ(ResolveManifest(dir->path(), "a")->digest, second.digest);
  auto ambiguous = ResolveManifest(dir->path(), "");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_EQ(ambiguous.error().message, dir->path() + ": holds 2 images; name one with :TAG (b, a)");
  EXPECT_EQ(ResolveManifest(dir->path(), "c").error().kind, ErrorKind::kNotFound);
}

TEST(Layout, DamagedConfigIsAnIntegrityError) {
  auto dir = fs::TempDir::Create("layout-test-");
  auto w = LayoutWriter::Open(dir->path());
  auto desc = WriteImage(*w, "v1", "x");
  auto manifest = oci::ParseManifest(*fs::ReadSmallFile(w->BlobPath(desc.digest)), "m");
  std::string cfg_path = w->BlobPath(manifest->config.digest);
  std::string cfg = *fs::ReadSmallFile(cfg_path);
  cfg[cfg.size() / 2] ^= 1;
  ASSERT_TRUE(fs::WriteFileAtomic(cfg_path, cfg).ok());
  auto img = Open(dir->path(), "v1");
  ASSERT_FALSE(img.ok());
  EXPECT_EQ(img.error().kind, ErrorKind::kIntegrity);
  EXPECT_NE(img.error().message.find("config: oci:" + dir->path() + ": blob " + manifest->config.digest.str() +
                                     ": content hashes to"),
            std::string::npos)
      << img.error().message;
}

TEST(Layout, RefusesAFolderThatIsNotALayout) {
  auto dir = fs::TempDir::Create("layout-test-");
  ASSERT_TRUE(fs::WriteFileAtomic(dir->path() + "/notes.txt", "mine").ok());
  auto w = LayoutWriter::Open(dir->path());
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().message,
            "output " + dir->path() + ": folder is not empty and is not an OCI layout (no oci-layout file)");
}

// The red team's class 2: a blob that is not a regular file inside the layout is
// refused by name, never read, sent or waited on.
TEST(Layout, BlobsThatAreNotRegularFilesAreRefused) {
  auto dir = fs::TempDir::Create("layout-test-");
  auto w = LayoutWriter::Open(dir->path());
  auto desc = WriteImage(*w, "v1", "layer");
  auto manifest = oci::ParseManifest(*fs::ReadSmallFile(w->BlobPath(desc.digest)), "m");
  std::string layer = w->BlobPath(manifest->layers[0].digest);
  ASSERT_TRUE(fs::WriteFileAtomic(dir->path() + "/secret", "layer").ok());
  LayoutStore store(dir->path(), "oci:x");
  struct Case {
    std::string kind;
    std::function<int()> make;
  };
  std::vector<Case> cases = {
      {"a symlink", [&] { return ::symlink((dir->path() + "/secret").c_str(), layer.c_str()); }},
      {"a FIFO", [&] { return ::mkfifo(layer.c_str(), 0600); }},
      {"a folder", [&] { return ::mkdir(layer.c_str(), 0700); }},
  };
  for (const auto& c : cases) {
    ASSERT_EQ(::unlink(layer.c_str()) == 0 || ::rmdir(layer.c_str()) == 0, true);
    ASSERT_EQ(c.make(), 0) << c.kind;
    auto r = store.OpenBlob(manifest->layers[0]);
    ASSERT_FALSE(r.ok()) << c.kind;
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput) << c.kind;
    EXPECT_NE(r.error().message.find("is " + c.kind + "; refused"), std::string::npos) << r.error().message;
  }
}

TEST(Layout, ASinkRefusesABlobWhoseSizeOrContentLies) {
  auto dir = fs::TempDir::Create("layout-test-");
  auto store = std::make_shared<oci::MemoryStore>();
  oci::Descriptor real = store->Add("twelve bytes", oci::kMediaTypeLayerGzip);
  oci::Descriptor short_size = real;
  short_size.size = 5;
  oci::Descriptor other = real;
  other.digest = oci::Digest::Of("something else");
  // The memory store serves by digest; point `other` at the real bytes.
  auto sink = LayoutSink::Open(dir->path() + "/out", "oci:out");
  ASSERT_TRUE(sink.ok());
  auto lied = (*sink)->PutBlob(oci::Blob(store, short_size), nullptr);
  ASSERT_FALSE(lied.ok());
  EXPECT_EQ(lied.error().kind, ErrorKind::kIntegrity);
  EXPECT_NE(lied.error().message.find("more than the 5 bytes its descriptor names"), std::string::npos)
      << lied.error().message;
  EXPECT_FALSE(fs::Exists(BlobPathIn(dir->path() + "/out", real.digest)));
  EXPECT_TRUE((*sink)->PutBlob(oci::Blob(store, real), nullptr).ok());
  EXPECT_TRUE(fs::Exists(BlobPathIn(dir->path() + "/out", real.digest)));
}

TEST(Layout, AnIndexChildIsFoundByDigest) {
  auto dir = fs::TempDir::Create("layout-test-");
  auto w = LayoutWriter::Open(dir->path());
  auto child = WriteImage(*w, "tmp", "child");
  oci::Index idx;
  child.platform = oci::Platform{"linux", "arm64", ""};
  idx.manifests.push_back(child);
  auto index_desc = w->WriteBlob(*oci::SerializeIndex(idx), oci::kMediaTypeIndex);
  ASSERT_TRUE(w->SetTag(*index_desc, "tmp").ok());  // replaces the child's tag: only the index is listed
  auto node = Open(dir->path(), "tmp");
  ASSERT_TRUE(node.ok()) << node.error().message;
  ASSERT_TRUE(node->is_index());
  auto entry = node->index->ChildFor(oci::Platform{"linux", "arm64", "v8"});
  ASSERT_TRUE(entry.ok()) << entry.error().message;
  EXPECT_TRUE(node->index->Child(*entry).ok());
  EXPECT_TRUE(Open(dir->path(), child.digest.str()).ok());
  auto none = node->index->ChildFor(oci::Platform{"linux", "amd64", ""});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no image for linux/amd64 (it has linux/arm64)"), std::string::npos);
}

}  // namespace imgtool::layout
