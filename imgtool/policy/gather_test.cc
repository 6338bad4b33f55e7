// GatherFacts on an index held in memory: which entries become images to judge, which are
// skipped and why, the bound on entries, and the signature asked for once, of the index.
#include <gtest/gtest.h>

#include "oci/counting_store.h"
#include "oci/media_types.h"
#include "oci/memory_store.h"
#include "policy/evaluate.h"
#include "policy/gather.h"

namespace imgtool::policy {
namespace {

class GatherIndex : public ::testing::Test {
 protected:
  // An image without layers: the config is all nonRoot needs for a numeric User.
  oci::Descriptor AddImage(const std::string& arch, const std::string& user) {
    oci::Json config = {{"architecture", arch},
                        {"os", "linux"},
                        {"config", {{"User", user}}},
                        {"rootfs", {{"type", "layers"}, {"diff_ids", oci::Json::array()}}}};
    oci::Manifest m;
    m.config = store_->Add(config.dump(), oci::kMediaTypeConfig);
    auto node = oci::AddManifest(store_, m);
    EXPECT_TRUE(node.ok());
    oci::Descriptor d = node->descriptor;
    d.platform = oci::Platform{"linux", arch, ""};
    return d;
  }

  oci::Descriptor AddArtifact() {
    oci::Manifest m;
    m.artifact_type = "application/vnd.example.sbom+json";
    m.config = store_->Add("{}", "application/vnd.oci.empty.v1+json");
    auto node = oci::AddManifest(store_, m);
    EXPECT_TRUE(node.ok());
    return node->descriptor;
  }

  Result<oci::Node> Index(const std::vector<oci::Descriptor>& entries) {
    oci::Index index;
    index.manifests = entries;
    return oci::AddIndex(store_, index);
  }

  ReferenceFacts Gather(const Result<oci::Node>& node) {
    Policy p;
    p.non_root = true;
    p.signed_by = SignedByRule{{"/k.pub"}};
    auto verify = [this](const std::string& ref, const SignedByRule&) {
      asked_.push_back(ref);
      return SignatureFacts{true, {"verified by k.pub"}};
    };
    return GatherFacts("oci:/multi:v1", node, p, verify);
  }

  std::shared_ptr<oci::MemoryStore> store_ = std::make_shared<oci::MemoryStore>();
  std::vector<std::string> asked_;
};

TEST_F(GatherIndex, EachImageGatheredArtifactsSkippedSignatureOfTheIndexOnce) {
  oci::Descriptor attestation;  // never opened: not even in the store
  attestation.media_type = std::string(oci::kMediaTypeManifest);
  attestation.digest = oci::Digest::Of("attestation");
  attestation.platform = oci::Platform{"unknown", "unknown", ""};
  oci::Descriptor amd64 = AddImage("amd64", "10001"), arm64 = AddImage("arm64", "0"), sbom = AddArtifact();
  auto index = Index({amd64, arm64, attestation, sbom});
  ASSERT_TRUE(index.ok());

  ReferenceFacts f = Gather(index);
  ASSERT_TRUE(f.index.has_value());
  EXPECT_EQ(f.top.digest, index->descriptor.digest.str());
  EXPECT_EQ(asked_, std::vector<std::string>{"oci:/multi:v1"});
  ASSERT_TRUE(f.top.signature.ok());
  EXPECT_TRUE(f.top.signature->verified);
  ASSERT_EQ(f.index->images.size(), 2u);
  EXPECT_EQ(f.index->images[0].platform, "linux/amd64");
  EXPECT_EQ(f.index->images[0].image.digest, amd64.digest.str());
  EXPECT_EQ(f.index->images[1].image.user, "0");
  EXPECT_FALSE(f.index->images[1].image.signature.ok());  // never asked for an image
  EXPECT_EQ(f.index->skipped,
            (std::vector<std::string>{
                "unknown/unknown " + attestation.digest.Short() + ": not a runnable platform (an attestation manifest)",
                "no platform " + sbom.digest.Short() + ": an artifact (application/vnd.example.sbom+json)"}));
  EXPECT_TRUE(AllOpened(f));

  Policy non_root;
  non_root.non_root = true;
  auto d = Evaluate(non_root, f);
  EXPECT_EQ(d.rules[0].reason, "linux/arm64 " + arm64.digest.Short() + ": config User '0' is uid 0 (root)");
}

TEST_F(GatherIndex, MoreEntriesThanTheBoundAreNotOpened) {
  std::vector<oci::Descriptor> entries(kMaxIndexEntries + 1, AddImage("amd64", "10001"));
  ReferenceFacts f = Gather(Index(entries));
  ASSERT_TRUE(f.index.has_value());
  EXPECT_EQ(f.index->bounded.error().message, "the index has 65 entries; at most 64 are judged");
  EXPECT_TRUE(f.index->images.empty());
  EXPECT_EQ(asked_.size(), 1u);
}

// Issue 24: entries that repeat one another (digest, size, media type) are judged by the
// facts gathered once: the image is read once, and each entry still judged by its platform.
TEST_F(GatherIndex, AnImageNamedByEveryEntryIsGatheredOnce) {
  oci::Descriptor image = AddImage("amd64", "0");
  std::vector<oci::Descriptor> entries(kMaxIndexEntries, image);
  entries[0].platform = oci::Platform{"linux", "arm64", ""};
  auto index = Index(entries);
  ASSERT_TRUE(index.ok());
  auto counted = std::make_shared<oci::CountingStore>(*store_);
  ReferenceFacts f = Gather(oci::OpenNode(counted, index->descriptor));
  ASSERT_TRUE(f.index.has_value());
  EXPECT_EQ(counted->counts().reads, 3u);  // the index, the manifest, the config
  ASSERT_EQ(f.index->images.size(), kMaxIndexEntries);
  EXPECT_EQ(f.index->images[0].platform, "linux/arm64");
  EXPECT_EQ(f.index->images[1].platform, "linux/amd64");
  Policy non_root;
  non_root.non_root = true;
  auto d = Evaluate(non_root, f);
  EXPECT_FALSE(d.pass);
  EXPECT_NE(d.rules[0].reason.find("linux/arm64 " + image.digest.Short()), std::string::npos) << d.rules[0].reason;
}

TEST_F(GatherIndex, NestedIndexOrMissingImageFailsClosed) {
  oci::Descriptor amd64 = AddImage("amd64", "10001");
  auto inner = Index({amd64});
  ASSERT_TRUE(inner.ok());
  oci::Descriptor missing = amd64;
  missing.digest = oci::Digest::Of("gone");
  missing.platform = oci::Platform{"linux", "arm64", ""};
  ReferenceFacts f = Gather(Index({inner->descriptor, missing}));
  ASSERT_EQ(f.index->images.size(), 2u);
  EXPECT_EQ(f.index->images[0].image.opened.error().message, "an index inside the index is not judged");
  EXPECT_EQ(f.index->images[1].image.digest, missing.digest.str());
  EXPECT_FALSE(f.index->images[1].image.opened.ok());
  EXPECT_FALSE(AllOpened(f));
}

// Issue 25: a manifest whose config is `{}` (BuildKit's attestations) or damaged, named at
// the top, is refused by every rule, naming the manifest; nothing else is read.
TEST_F(GatherIndex, AnArtifactOrAConfigProblemAtTheTopFailsEveryRule) {
  oci::Manifest attestation;
  attestation.config = store_->Add("{}", oci::kMediaTypeConfig);
  auto node = oci::AddManifest(store_, attestation);
  ASSERT_TRUE(node.ok());
  ReferenceFacts f = Gather(node);
  ASSERT_FALSE(f.top.opened.ok());
  EXPECT_EQ(f.top.opened.error().message, "manifest " + node->descriptor.digest.Short() +
                                              ": an artifact (application/vnd.oci.image.config.v1+json), not an "
                                              "image: no rule judges it");
  oci::Manifest damaged;
  damaged.config = store_->Add(R"({"rootfs":{}})", oci::kMediaTypeConfig);
  f = Gather(oci::AddManifest(store_, damaged));
  ASSERT_FALSE(f.top.opened.ok());
  EXPECT_NE(f.top.opened.error().message.find("$.rootfs.diff_ids missing"), std::string::npos)
      << f.top.opened.error().message;
  Policy non_root;
  non_root.non_root = true;
  EXPECT_FALSE(Evaluate(non_root, f).pass);
}

TEST_F(GatherIndex, AnImageIsGatheredAsBefore) {
  oci::Descriptor amd64 = AddImage("amd64", "10001");
  ReferenceFacts f = Gather(oci::OpenNode(store_, amd64));
  EXPECT_FALSE(f.index.has_value());
  EXPECT_EQ(f.top.user, "10001");
  EXPECT_EQ(f.top.digest, amd64.digest.str());
  EXPECT_EQ(asked_.size(), 1u);
  ReferenceFacts unopened = Gather(MakeError(ErrorKind::kNotFound, "no such image"));
  EXPECT_FALSE(AllOpened(unopened));
}

}  // namespace
}  // namespace imgtool::policy
