#include <gtest/gtest.h>

#include "fs/atomic_file.h"
#include "layout/layout_reader.h"
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

}  // namespace

TEST(Layout, WriteThenReadBack) {
  auto dir = fs::TempDir::Create("layout-test-");
  auto w = LayoutWriter::Open(dir->path() + "/img");
  ASSERT_TRUE(w.ok()) << w.error().message;
  auto desc = WriteImage(*w, "v1", "layer-bytes");
  EXPECT_EQ(*fs::ReadSmallFile(dir->path() + "/img/oci-layout"), R"({"imageLayoutVersion":"1.0.0"})");
  auto img = OpenLayoutImage(dir->path() + "/img", "v1");
  ASSERT_TRUE(img.ok()) << img.error().message;
  EXPECT_EQ((*img)->digest(), desc.digest);
  ASSERT_EQ((*img)->layers().size(), 1u);
  EXPECT_EQ((*img)->layers()[0]->diff_id(), oci::Digest::Of("layer-bytes"));
  // The only image is found without a tag, and by digest.
  EXPECT_TRUE(OpenLayoutImage(dir->path() + "/img", "").ok());
  EXPECT_TRUE(OpenLayoutImage(dir->path() + "/img", desc.digest.str()).ok());
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
  auto img = OpenLayoutImage(dir->path(), "v1");
  ASSERT_FALSE(img.ok());
  EXPECT_EQ(img.error().kind, ErrorKind::kIntegrity);
  EXPECT_NE(img.error().message.find("config: blob " + manifest->config.digest.str() + ": content hashes to"),
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

}  // namespace imgtool::layout
