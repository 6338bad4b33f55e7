#include "builder/blob_store.h"

#include <gtest/gtest.h>

#include "layout/layout_sink.h"
#include "oci/media_types.h"

namespace imgtool::build {

namespace {

// A sink without a staging folder of its own (as a registry's).
class NoStagingSink : public oci::Sink {
 public:
  std::string name() const override { return "no staging"; }
  Result<oci::PutOutcome> PutBlob(const oci::Blob&, const std::function<void(uint64_t)>&) override {
    return oci::PutOutcome{"uploaded", 0, 0};
  }
  Status PutManifest(const oci::Descriptor&, const std::string&, const std::optional<std::string>&) override {
    return Status::Ok();
  }
  Status Commit() override { return Status::Ok(); }
  void Discard() override {}
};

}  // namespace

// A layout sink's own folder is the store: what the build writes there, the sink holds
// already, so handing it over copies nothing.
TEST(BlobStore, StagesInALayoutSinksOwnFolder) {
  auto tmp = fs::TempDir::Create("blob-store-test-");
  ASSERT_TRUE(tmp.ok());
  std::string dir = tmp->path() + "/out";
  auto sink = layout::LayoutSink::Open(dir, "out");
  ASSERT_TRUE(sink.ok());
  auto store = BlobStore::For(**sink);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(store->dir(), dir);
  auto d = store->writer().WriteBlob("{}", oci::kMediaTypeConfig);
  ASSERT_TRUE(d.ok());
  const std::string config_type(oci::kMediaTypeConfig);
  const std::string manifest = R"({"schemaVersion":2,"mediaType":")" + std::string(oci::kMediaTypeManifest) +
                               R"(","config":{"mediaType":")" + config_type + R"(","digest":")" + d->digest.str() +
                               R"(","size":2},"layers":[]})";
  auto m = store->writer().WriteBlob(manifest, oci::kMediaTypeManifest);
  ASSERT_TRUE(m.ok());
  auto node = store->Open(*m);
  ASSERT_TRUE(node.ok()) << node.error().message;
  auto put = (*sink)->PutBlob(*node->image->config_blob(), nullptr);
  ASSERT_TRUE(put.ok());
  EXPECT_EQ(put->action, "exists");
}

// Elsewhere a temporary folder, removed with the store.
TEST(BlobStore, StagesInATemporaryFolderRemovedAfterwards) {
  NoStagingSink sink;
  std::string dir;
  {
    auto store = BlobStore::For(sink);
    ASSERT_TRUE(store.ok());
    dir = store->dir();
    EXPECT_TRUE(fs::Exists(dir + "/oci-layout"));
    ASSERT_TRUE(store->writer().WriteBlob("x", "application/octet-stream").ok());
  }
  EXPECT_FALSE(fs::Exists(dir));
}

}  // namespace imgtool::build
