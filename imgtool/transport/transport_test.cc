// The walk (Write), Copy with the artifacts that travel, and index assembly, between
// layouts in a temporary folder: every order and check that does not need a registry.
#include <gtest/gtest.h>

#include "fs/atomic_file.h"
#include "layout/layout_reader.h"
#include "oci/counting_store.h"
#include "oci/image_config.h"
#include "oci/media_types.h"
#include "oci/memory_store.h"
#include "transport/copy.h"
#include "transport/index.h"

namespace imgtool::transport {

namespace {

// A sink that records the order of what it is given, for the walk's promises.
class RecordingSink : public oci::Sink {
 public:
  std::string name() const override { return "recording"; }
  Result<oci::PutOutcome> PutBlob(const oci::Blob& b, const std::function<void(uint64_t)>&) override {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back("blob " + b.digest().Short());
    return oci::PutOutcome{"written", 0, 0};
  }
  Status PutManifest(const oci::Descriptor& d, const std::string&, const std::optional<std::string>& tag) override {
    events.push_back("manifest " + d.digest.Short() + (tag ? " tag=" + *tag : ""));
    return Status::Ok();
  }
  Status Commit() override { return Status::Ok(); }
  void Discard() override {}
  std::mutex mu;
  std::vector<std::string> events;
};

oci::Descriptor AddImage(oci::MemoryStore& store, const std::string& arch, const std::string& content) {
  oci::Json cfg = oci::NewImageConfig("linux", arch);
  oci::Manifest m;
  m.layers.push_back(store.Add(content, oci::kMediaTypeLayerTar));
  oci::AppendLayerToConfig(cfg, m.layers[0].digest, {"1970-01-01T00:00:00Z", "t", false});
  m.config = store.Add(*oci::CanonicalJson(cfg), oci::kMediaTypeConfig);
  auto d = store.Add(*oci::SerializeManifest(m), oci::kMediaTypeManifest);
  d.platform = oci::Platform{"linux", arch, ""};
  return d;
}

// Writes a memory image into a layout folder under `tag`.
void WriteTo(const std::string& dir, const std::shared_ptr<oci::MemoryStore>& store, const oci::Descriptor& d,
             const std::string& tag) {
  auto node = oci::OpenNode(store, d);
  ASSERT_TRUE(node.ok()) << node.error().message;
  auto sink = OpenSink(*ref::ParseReference("oci:" + dir));
  ASSERT_TRUE(sink.ok());
  WriteReport r;
  ASSERT_TRUE(Write(*node, **sink, tag, {}, r).ok());
}

}  // namespace

TEST(Write, BlobsFirstThenChildrenThenTheTaggedTop) {
  auto store = std::make_shared<oci::MemoryStore>();
  oci::Index idx;
  idx.manifests = {AddImage(*store, "amd64", "a"), AddImage(*store, "arm64", "b")};
  auto top = oci::AddIndex(store, idx);
  ASSERT_TRUE(top.ok()) << top.error().message;
  RecordingSink sink;
  WriteOptions one;
  one.jobs = 1;
  WriteReport report;
  ASSERT_TRUE(Write(*top, sink, "v1", one, report).ok());
  ASSERT_EQ(sink.events.size(), 4u + 3u);  // 2 configs + 2 layers, 2 manifests + the index
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(sink.events[i].rfind("blob ", 0), 0u) << sink.events[i];
  EXPECT_EQ(sink.events[4], "manifest " + idx.manifests[0].digest.Short());
  EXPECT_EQ(sink.events[5], "manifest " + idx.manifests[1].digest.Short());
  EXPECT_EQ(sink.events[6], "manifest " + top->descriptor.digest.Short() + " tag=v1");
  EXPECT_EQ(report.digest, top->descriptor.digest);
  EXPECT_EQ(report.manifests.size(), 3u);
}

// Issue 24: an index naming one image many times (20,000 in the attack) is walked reading
// the image once; an entry naming it with another size is still opened, and refused.
TEST(Write, AnImageNamedByManyEntriesIsReadOnce) {
  auto memory = std::make_shared<oci::MemoryStore>();
  auto image = AddImage(*memory, "amd64", "a");
  oci::Index idx;
  idx.manifests.assign(2000, image);
  auto index = memory->Add(*oci::SerializeIndex(idx), oci::kMediaTypeIndex);
  auto counted = std::make_shared<oci::CountingStore>(*memory);
  auto top = oci::OpenNode(counted, index);
  ASSERT_TRUE(top.ok()) << top.error().message;
  RecordingSink sink;
  WriteReport report;
  ASSERT_TRUE(Write(*top, sink, "v1", {}, report).ok());
  EXPECT_EQ(report.manifests.size(), 2u);
  EXPECT_EQ(sink.events.size(), 2u + 2u);            // config, layer; the image, the index
  EXPECT_EQ(counted->counts().reads, 1u + 1u + 1u);  // the index, the manifest, the config

  idx.manifests[7].size += 1;
  auto lying = oci::OpenNode(counted, memory->Add(*oci::SerializeIndex(idx), oci::kMediaTypeIndex));
  ASSERT_TRUE(lying.ok());
  RecordingSink refused;
  Status st = Write(*lying, refused, "v1", {}, report);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::kIntegrity) << st.error().message;
}

TEST(Copy, CarriesSiblingArtifactsUnlessAskedNot) {
  auto tmp = fs::TempDir::Create("transport-test-");
  auto store = std::make_shared<oci::MemoryStore>();
  auto image = AddImage(*store, "amd64", "payload");
  std::string src = tmp->path() + "/src";
  WriteTo(src, store, image, "v1");
  // A stand-in for a signature: any image at the sibling tag travels.
  WriteTo(src, store, AddImage(*store, "amd64", "sig"), "sha256-" + image.digest.hex() + ".sig");

  CopyOptions opts;
  auto with =
      Copy(*ref::ParseReference("oci:" + src + ":v1"), *ref::ParseReference("oci:" + tmp->path() + "/a:v1"), opts);
  ASSERT_TRUE(with.ok()) << with.error().message;
  EXPECT_EQ(with->artifacts, std::vector<std::string>{"sha256-" + image.digest.hex() + ".sig"});
  EXPECT_TRUE(layout::ReadIndex(tmp->path() + "/a").ok());
  EXPECT_EQ(layout::ReadIndex(tmp->path() + "/a")->manifests.size(), 2u);

  opts.artifacts = false;
  auto without =
      Copy(*ref::ParseReference("oci:" + src + ":v1"), *ref::ParseReference("oci:" + tmp->path() + "/b:v1"), opts);
  ASSERT_TRUE(without.ok());
  EXPECT_TRUE(without->artifacts.empty());
  EXPECT_EQ(layout::ReadIndex(tmp->path() + "/b")->manifests.size(), 1u);
}

TEST(Copy, ADestinationPinnedToAnotherDigestIsRefusedBeforeWriting) {
  auto tmp = fs::TempDir::Create("transport-test-");
  auto store = std::make_shared<oci::MemoryStore>();
  auto image = AddImage(*store, "amd64", "x");
  WriteTo(tmp->path() + "/src", store, image, "v1");
  auto dst = *ref::ParseReference("oci:" + tmp->path() + "/dst@" + oci::Digest::Of("other").str());
  auto r = Copy(*ref::ParseReference("oci:" + tmp->path() + "/src:v1"), dst, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, dst.str() + ": the source's digest is " + image.digest.str());
  EXPECT_FALSE(fs::Exists(tmp->path() + "/dst"));
}

TEST(Index, NamesEachImageWithItsPlatformAndRefusesTwoForOne) {
  auto tmp = fs::TempDir::Create("transport-test-");
  auto store = std::make_shared<oci::MemoryStore>();
  WriteTo(tmp->path() + "/amd", store, AddImage(*store, "amd64", "a"), "v1");
  WriteTo(tmp->path() + "/arm", store, AddImage(*store, "arm64", "b"), "v1");
  auto amd = *ref::ParseReference("oci:" + tmp->path() + "/amd:v1");
  auto arm = *ref::ParseReference("oci:" + tmp->path() + "/arm:v1");
  auto dst = *ref::ParseReference("oci:" + tmp->path() + "/multi:v1");
  auto r = AssembleIndex({amd, arm}, dst, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->entries.size(), 2u);
  EXPECT_EQ(oci::PlatformString(*r->entries[1].platform), "linux/arm64");
  auto opened = Open(dst);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  ASSERT_TRUE(opened->node.is_index());
  auto arm_node = SelectPlatform(opened->node, oci::Platform{"linux", "arm64", ""});
  ASSERT_TRUE(arm_node.ok());
  EXPECT_EQ(arm_node->descriptor.digest, r->entries[1].digest);

  auto twice = AssembleIndex({amd, amd}, *ref::ParseReference("oci:" + tmp->path() + "/dup:v1"), {});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("two images for linux/amd64"), std::string::npos);
  EXPECT_FALSE(fs::Exists(tmp->path() + "/dup"));
}

namespace {

// `indexes` indexes, each the only entry of the one above, over an amd64 image.
oci::Descriptor IndexChain(oci::MemoryStore& store, int indexes) {
  oci::Descriptor d = AddImage(store, "amd64", "chain");
  for (int i = 0; i < indexes; ++i) {
    oci::Index idx;
    idx.manifests = {d};
    d = store.Add(*oci::SerializeIndex(idx), oci::kMediaTypeIndex);
    d.platform = oci::Platform{"linux", "amd64", ""};
  }
  return d;
}

}  // namespace

// Issue 24: every walk stops at oci::kMaxIndexDepth (ImageIndex::Child): the write walk,
// --platform, and index assembly, which must not write an index one level deeper than
// any verb reads.
TEST(Index, NestingPastTheSharedDepthIsNeitherWalkedNorWritten) {
  auto tmp = fs::TempDir::Create("transport-test-");
  auto store = std::make_shared<oci::MemoryStore>();
  const std::string why = "nested too deep (more than 4 index levels)";
  auto deep = oci::OpenNode(store, IndexChain(*store, oci::kMaxIndexDepth + 1));
  ASSERT_TRUE(deep.ok());
  RecordingSink sink;
  WriteReport report;
  auto written = Write(*deep, sink, std::nullopt, {}, report);
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.error().kind, ErrorKind::kInvalidInput);
  EXPECT_NE(written.error().message.find(why), std::string::npos) << written.error().message;
  EXPECT_TRUE(sink.events.empty());
  auto selected = SelectPlatform(*deep, oci::Platform{"linux", "amd64", ""});
  ASSERT_FALSE(selected.ok());
  EXPECT_NE(selected.error().message.find(why), std::string::npos) << selected.error().message;

  // index create: a member of 3 levels fits under the new top, one of 4 would make 5.
  WriteTo(tmp->path() + "/three", store, IndexChain(*store, oci::kMaxIndexDepth - 1), "v1");
  WriteTo(tmp->path() + "/four", store, IndexChain(*store, oci::kMaxIndexDepth), "v1");
  auto three = *ref::ParseReference("oci:" + tmp->path() + "/three:v1");
  auto four = *ref::ParseReference("oci:" + tmp->path() + "/four:v1");
  auto fits = AssembleIndex({three}, *ref::ParseReference("oci:" + tmp->path() + "/ok:v1"), {});
  ASSERT_TRUE(fits.ok()) << fits.error().message;
  auto too_deep = AssembleIndex({four}, *ref::ParseReference("oci:" + tmp->path() + "/deep:v1"), {});
  ASSERT_FALSE(too_deep.ok());
  EXPECT_EQ(too_deep.error().kind, ErrorKind::kInvalidInput);
  EXPECT_NE(too_deep.error().message.find(" inside the new index: manifest "), std::string::npos)
      << too_deep.error().message;
  EXPECT_NE(too_deep.error().message.find(why), std::string::npos) << too_deep.error().message;
  EXPECT_FALSE(fs::Exists(tmp->path() + "/deep"));
}

}  // namespace imgtool::transport
