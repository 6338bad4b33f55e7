// The views over a BlobStore: images, artifacts and indexes told apart, every byte
// checked, and hostile manifests (random mutations of valid ones) refused without a
// crash.
#include <gtest/gtest.h>

#include <random>

#include "oci/image.h"
#include "oci/image_config.h"
#include "oci/media_types.h"
#include "oci/memory_store.h"
#include "oci/warnings.h"

namespace imgtool::oci {

namespace {

Descriptor AddImage(MemoryStore& store, const std::string& arch) {
  Json cfg = NewImageConfig("linux", arch);
  Manifest m;
  m.layers.push_back(store.Add("layer-" + arch, kMediaTypeLayerGzip));
  AppendLayerToConfig(cfg, Digest::Of("tar-" + arch), {"1970-01-01T00:00:00Z", "t", false});
  m.config = store.Add(*CanonicalJson(cfg), kMediaTypeConfig);
  auto d = store.Add(*SerializeManifest(m), kMediaTypeManifest);
  d.platform = Platform{"linux", arch, ""};
  return d;
}

}  // namespace

TEST(Image, ImagesArtifactsAndIndexesAreToldApart) {
  auto store = std::make_shared<MemoryStore>();
  auto amd = AddImage(*store, "amd64");
  auto node = OpenNode(store, amd);
  ASSERT_TRUE(node.ok()) << node.error().message;
  ASSERT_TRUE(node->image);
  EXPECT_FALSE(node->image->is_artifact());
  EXPECT_EQ(node->image->layers()[0]->diff_id(), Digest::Of("tar-amd64"));

  Manifest art;
  art.artifact_type = "application/vnd.example+json";
  art.config = store->Add("{}", kMediaTypeEmpty);
  art.layers.push_back(store->Add("hello", "text/plain"));
  art.subject = amd;
  auto a = AddManifest(store, art);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_TRUE(a->image->is_artifact());
  EXPECT_EQ(a->image->artifact_type(), "application/vnd.example+json");
  EXPECT_TRUE(a->image->layers()[0]->diff_id().empty());
  EXPECT_EQ(a->image->manifest().subject->digest, amd.digest);

  Index idx;
  idx.manifests = {amd, AddImage(*store, "arm64")};
  auto i = AddIndex(store, idx);
  ASSERT_TRUE(i.ok());
  ASSERT_TRUE(i->is_index());
  auto arm = i->index->ChildFor(Platform{"linux", "arm64", "v8"});
  ASSERT_TRUE(arm.ok());
  EXPECT_TRUE(i->index->Child(*arm)->image);
}

TEST(Image, EveryByteIsCheckedAgainstItsDescriptor) {
  auto store = std::make_shared<MemoryStore>();
  auto amd = AddImage(*store, "amd64");
  Descriptor lying = amd;
  lying.size += 1;
  auto n = OpenNode(store, lying);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().kind, ErrorKind::kIntegrity);
  Descriptor wrong_type = amd;
  wrong_type.media_type = std::string(kMediaTypeIndex);
  Manifest typed;
  typed.config = store->Add(*CanonicalJson(NewImageConfig("linux", "amd64")), kMediaTypeConfig);
  auto typed_node = AddManifest(store, typed);  // its body says it is a manifest
  ASSERT_TRUE(typed_node.ok());
  Descriptor as_index = typed_node->descriptor;
  as_index.media_type = std::string(kMediaTypeIndex);
  auto confused = OpenNode(store, as_index);
  ASSERT_FALSE(confused.ok());
  EXPECT_NE(confused.error().message.find("but it was named as"), std::string::npos) << confused.error().message;

  auto layer = OpenNode(store, amd)->image->layers()[0];
  Blob short_blob(store, Descriptor{layer->media_type(), layer->digest(), layer->size() + 5, {}, {}});
  auto r = short_blob.Open();
  ASSERT_TRUE(r.ok());
  auto all = ReadAll(**r, 1 << 20, "x");
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.error().message.find("ends after 11 of the 16 bytes"), std::string::npos) << all.error().message;
}

namespace {

// What the library warned about while one of these lives (oci/warnings.h).
struct CapturedWarnings {
  std::vector<std::string> got;
  WarningHandler previous;
  CapturedWarnings() {
    previous = SetWarningHandler([this](const std::string& m) { got.push_back(m); });
  }
  ~CapturedWarnings() { SetWarningHandler(previous); }
};

Descriptor Named(Descriptor d, std::string_view media_type) {
  d.media_type = std::string(media_type);
  return d;
}

}  // namespace

// Issue 25: go-containerregistry's test_index names a Docker schema 2 manifest as an OCI
// manifest. As go-containerregistry and skopeo do, the descriptor says the kind, the bytes
// say which of it: every verb reads it as Docker's, with one warning naming both.
TEST(ManifestMediaType, TheBytesSayWhichOfTheKindTheDescriptorNames) {
  auto store = std::make_shared<MemoryStore>("oci:x");
  Manifest docker;
  docker.media_type = std::string(kMediaTypeDockerManifest);
  docker.config = store->Add(*CanonicalJson(NewImageConfig("linux", "amd64")), kMediaTypeDockerConfig);
  Descriptor d = store->Add(*SerializeManifest(docker), kMediaTypeManifest);  // named as OCI
  CapturedWarnings warnings;
  auto node = OpenNode(store, d);
  ASSERT_TRUE(node.ok()) << node.error().message;
  EXPECT_EQ(node->descriptor.media_type, kMediaTypeDockerManifest);  // what copy writes and pushes
  EXPECT_EQ(node->image->descriptor().media_type, kMediaTypeDockerManifest);
  EXPECT_EQ(node->descriptor.digest, d.digest);
  ASSERT_EQ(warnings.got.size(), 1u);
  EXPECT_EQ(warnings.got[0], "oci:x: manifest " + d.digest.Short() + ": named as " + std::string(kMediaTypeManifest) +
                                 ", but its own mediaType is " + std::string(kMediaTypeDockerManifest) + "; read as " +
                                 std::string(kMediaTypeDockerManifest));

  // Indexes alike: an OCI index named as a Docker manifest list is an OCI index.
  Index idx;
  idx.manifests = {AddImage(*store, "amd64")};
  Descriptor i = store->Add(*SerializeIndex(idx), kMediaTypeDockerManifestList);
  auto index = OpenNode(store, i);
  ASSERT_TRUE(index.ok()) << index.error().message;
  EXPECT_EQ(index->descriptor.media_type, kMediaTypeIndex);
  EXPECT_EQ(warnings.got.size(), 2u);

  // Agreement, or bytes without a mediaType (umoci), or a descriptor without one: no warning.
  EXPECT_EQ(*ManifestMediaType(Named(d, kMediaTypeDockerManifest), *ReadBlob(*store, d, 1 << 20), "w"),
            kMediaTypeDockerManifest);
  EXPECT_EQ(*ManifestMediaType(Named(d, kMediaTypeDockerManifest), R"({"schemaVersion":2})", "w"),
            kMediaTypeDockerManifest);
  EXPECT_EQ(*ManifestMediaType(Named(d, ""), *ReadBlob(*store, d, 1 << 20), "w"), kMediaTypeDockerManifest);
  EXPECT_EQ(*ManifestMediaType(Named(d, ""), R"({"manifests":[]})", "w"), kMediaTypeIndex);
  EXPECT_EQ(warnings.got.size(), 2u);
}

TEST(ManifestMediaType, AnotherKindOrAnUnknownTypeIsRefusedByEveryVerb) {
  const std::string manifest_bytes = R"({"mediaType":"application/vnd.oci.image.manifest.v1+json"})";
  Descriptor d{std::string(kMediaTypeIndex), Digest::Of("x"), 1, {}, {}, {}};
  CapturedWarnings warnings;
  auto other_kind = ManifestMediaType(d, manifest_bytes, "w");
  ASSERT_FALSE(other_kind.ok());
  EXPECT_EQ(other_kind.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(other_kind.error().message,
            "w: its mediaType is \"application/vnd.oci.image.manifest.v1+json\", but it "
            "was named as application/vnd.oci.image.index.v1+json");
  // test_index's "2": a descriptor's media type named as a manifest's.
  auto unknown = ManifestMediaType(Named(d, "application/vnd.oci.descriptor.v1+json"), manifest_bytes, "w");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(
      unknown.error().message.find("w: unsupported manifest media type \"application/vnd.oci.descriptor.v1+json\""),
      std::string::npos)
      << unknown.error().message;
  // Bytes claiming a kind imgtool does not read, under a known one.
  auto odd = ManifestMediaType(Named(d, kMediaTypeManifest),
                               R"({"mediaType":"application/vnd.oci.artifact.manifest.v1+json"})", "w");
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.error().kind, ErrorKind::kInvalidInput);
  EXPECT_TRUE(warnings.got.empty());
}

// Issue 25: `{}` under the image config media type (BuildKit's attestation manifests,
// regclient's testrepo) is not an image config; its manifest is an artifact, and nothing
// about opening it fails.
TEST(Image, AConfigWithoutRootfsMakesAnArtifact) {
  auto store = std::make_shared<MemoryStore>();
  Manifest m;
  m.config = store->Add("{}", kMediaTypeConfig);
  m.layers.push_back(store->Add(R"({"_type":"https://in-toto.io/Statement/v0.1"})", "application/vnd.in-toto+json"));
  auto node = AddManifest(store, m);
  ASSERT_TRUE(node.ok()) << node.error().message;
  EXPECT_TRUE(node->image->is_artifact());
  EXPECT_EQ(node->image->artifact_type(), kMediaTypeConfig);
  ASSERT_TRUE(node->image->config().ok());
  EXPECT_EQ(*node->image->config(), Json::object());
  EXPECT_EQ(*node->image->raw_config(), "{}");
  ASSERT_EQ(node->image->layers().size(), 1u);
  EXPECT_TRUE(node->image->layers()[0]->diff_id().empty());
}

// A config that cannot be read or understood is the image's config error, not the open's:
// digest, raw bytes and copy never need it; the verbs that judge contents take the error
// from config(), which names the manifest. Every layer is still listed (copy walks them).
TEST(Image, AConfigProblemIsKeptForTheVerbsThatJudgeContents) {
  auto store = std::make_shared<MemoryStore>("oci:x");
  auto with_config = [&](const std::string& bytes, int64_t size_delta) {
    Manifest m;
    m.config = store->Add(bytes, kMediaTypeConfig);
    m.config.size += size_delta;
    m.layers.push_back(store->Add("layer", kMediaTypeLayerGzip));
    auto node = AddManifest(store, m);
    EXPECT_TRUE(node.ok()) << node.error().message;
    EXPECT_FALSE(node->image->config().ok());
    EXPECT_EQ(node->image->layers().size(), 1u);
    EXPECT_FALSE(node->image->is_artifact());
    EXPECT_NE(node->image->config().error().message.find("oci:x: manifest " + node->descriptor.digest.Short() + ": "),
              std::string::npos)
        << node->image->config().error().message;
    return node->image->config().error();
  };
  Json config = NewImageConfig("linux", "amd64");
  // containers/image's fixtures: the descriptor names 585 bytes, the config has 584.
  EXPECT_EQ(with_config(*CanonicalJson(config), 1).kind, ErrorKind::kIntegrity);
  EXPECT_EQ(with_config("[]", 0).kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(with_config(R"({"rootfs":{}})", 0).kind, ErrorKind::kInvalidInput);
  auto count = with_config(*CanonicalJson(config), 0);  // no diff_id for its one layer
  EXPECT_EQ(count.kind, ErrorKind::kIntegrity);
  EXPECT_NE(count.message.find("manifest has 1 layers, config 0 diff_ids"), std::string::npos) << count.message;

  Manifest missing;  // a config the store does not hold
  missing.config = Descriptor{std::string(kMediaTypeConfig), Digest::Of("gone"), 4, {}, {}, {}};
  auto node = AddManifest(store, missing);
  ASSERT_TRUE(node.ok()) << node.error().message;
  EXPECT_EQ(node->image->config().error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(node->image->raw_config().error().kind, ErrorKind::kNotFound);
}

namespace {

// `indexes` indexes, each the only entry of the one above, the last holding an image:
// the top's descriptor.
Descriptor IndexChain(MemoryStore& store, int indexes) {
  Descriptor d = AddImage(store, "amd64");
  for (int i = 0; i < indexes; ++i) {
    Index idx;
    idx.manifests = {d};
    d = store.Add(*SerializeIndex(idx), kMediaTypeIndex);
    d.platform = Platform{"linux", "amd64", ""};
  }
  return d;
}

// From the top down through ImageIndex::Child: the first error, else the image's node.
Result<Node> WalkDown(const std::shared_ptr<MemoryStore>& store, const Descriptor& top) {
  auto node = OpenNode(store, top);
  int level = 1;
  while (node.ok() && node->is_index()) {
    EXPECT_EQ(node->index->level(), level++);
    node = node->index->Child(node->index->children()[0]);
  }
  return node;
}

}  // namespace

// Issue 24: an index nested 12,000 deep ended every verb that walked it (SelectPlatform
// recursed once per level) with SIGSEGV. The one way down from an index refuses the
// level past kMaxIndexDepth, whichever verb walks.
TEST(Image, IndexesNestAtMostTheSharedDepth) {
  auto store = std::make_shared<MemoryStore>("mem");
  auto ok = WalkDown(store, IndexChain(*store, kMaxIndexDepth));
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_TRUE(ok->image);

  Descriptor top = IndexChain(*store, kMaxIndexDepth + 1);
  auto deep = WalkDown(store, top);
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().kind, ErrorKind::kInvalidInput);
  const std::string why = ": nested too deep (more than 4 index levels)";
  EXPECT_EQ(deep.error().message.substr(deep.error().message.size() - why.size()), why) << deep.error().message;
  EXPECT_NE(deep.error().message.find("mem: manifest sha256:"), std::string::npos) << deep.error().message;

  // 12,000 levels: refused at the fifth, long before the stack matters.
  auto far = WalkDown(store, IndexChain(*store, 12'000));
  ASSERT_FALSE(far.ok());
  EXPECT_NE(far.error().message.find(why), std::string::npos) << far.error().message;

  // Levels count from where the walk starts: any index opened by OpenNode is a top.
  EXPECT_TRUE(WalkDown(store, IndexChain(*store, 2)).ok());
}

TEST(Image, CheckIndexDepthNamesTheIndex) {
  Digest d = Digest::Of("x");
  EXPECT_TRUE(CheckIndexDepth(d, 1).ok());
  EXPECT_TRUE(CheckIndexDepth(d, kMaxIndexDepth).ok());
  auto past = CheckIndexDepth(d, kMaxIndexDepth + 1);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(past.error().message, "manifest " + d.Short() + ": nested too deep (more than 4 index levels)");
}

TEST(Image, PlatformsParseAndMatchAsCraneSpellsThem) {
  EXPECT_EQ(PlatformString(*ParsePlatform("linux/arm64/v8")), "linux/arm64/v8");
  EXPECT_FALSE(ParsePlatform("linux").ok());
  EXPECT_FALSE(ParsePlatform("linux//v8").ok());
  EXPECT_FALSE(ParsePlatform("a/b/c/d").ok());
  EXPECT_TRUE(PlatformMatches({"linux", "arm64", ""}, {"linux", "arm64", "v8"}));
  EXPECT_TRUE(PlatformMatches({"linux", "arm64", "v8"}, {"linux", "arm64", ""}));
  EXPECT_FALSE(PlatformMatches({"linux", "arm", "v7"}, {"linux", "arm", "v6"}));
  EXPECT_FALSE(PlatformMatches({"linux", "amd64", ""}, {"windows", "amd64", ""}));
}

// Random byte flips, insertions and truncations of valid manifests and indexes: every
// outcome is a node or an error with a kind, never a crash (run under ASan in CI).
TEST(Image, MutatedManifestsNeverCrash) {
  auto base = std::make_shared<MemoryStore>();
  Index idx;
  idx.manifests = {AddImage(*base, "amd64"), AddImage(*base, "arm64")};
  std::vector<std::string> seeds = {*SerializeIndex(idx)};
  for (const auto& d : idx.manifests) seeds.push_back(*ReadBlob(*base, d, 1 << 20));
  std::mt19937 rng(20261201);
  int opened = 0, refused = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes = seeds[rng() % seeds.size()];
    for (int k = 1 + static_cast<int>(rng() % 4); k > 0; --k) {
      size_t at = rng() % bytes.size();
      switch (rng() % 3) {
        case 0:
          bytes[at] = static_cast<char>(rng());
          break;
        case 1:
          bytes.insert(at, 1, "{}[]\",:0a"[rng() % 9]);
          break;
        default:
          bytes.resize(at);
          break;
      }
      if (bytes.empty()) bytes = "{";
    }
    auto store = std::make_shared<MemoryStore>(*base);
    Descriptor d = store->Add(bytes, "");
    auto node = OpenNode(store, d);
    if (!node.ok()) {
      ++refused;
      continue;
    }
    ++opened;
    if (node->is_index()) {
      for (const auto& c : node->index->children()) (void)node->index->Child(c);
    } else {
      for (const auto& l : node->image->layers()) {
        auto r = l->Open();
        if (r.ok()) (void)Drain(**r);
      }
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_EQ(opened + refused, 20000);
}

}  // namespace imgtool::oci
