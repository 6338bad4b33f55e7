// verify and diff over images held in memory (a fake BlobStore the tests can damage):
// this test links only imgtool_check and what it needs (archive, oci), no backend.
#include <gtest/gtest.h>

#include "archive/layer.h"
#include "check/diff.h"
#include "check/verify.h"
#include "fs/atomic_file.h"
#include "oci/counting_store.h"
#include "oci/image_config.h"
#include "oci/media_types.h"
#include "oci/warnings.h"

namespace imgtool::check {

namespace {

// Blobs by digest; tests change or drop them to play a damaged source.
class FakeStore : public oci::BlobStore {
 public:
  std::string name() const override { return "fake"; }
  Result<std::unique_ptr<oci::Reader>> OpenBlob(const oci::Descriptor& d) const override {
    auto it = blobs.find(d.digest);
    if (it == blobs.end()) return MakeError(ErrorKind::kNotFound, "blob " + d.digest.str() + ": missing");
    return std::unique_ptr<oci::Reader>(std::make_unique<oci::StringReader>(it->second));
  }
  oci::Descriptor Add(const std::string& bytes, std::string_view media_type) {
    oci::Descriptor d{std::string(media_type), oci::Digest::Of(bytes), static_cast<int64_t>(bytes.size()), {}, {}};
    blobs[d.digest] = bytes;
    return d;
  }
  std::map<oci::Digest, std::string> blobs;
};

// A gzip layer holding one file f.txt with `content`, as the build writes it.
std::string GzipLayer(const std::string& content, oci::Digest& diff_id) {
  auto tmp = fs::TempDir::Create("check-test-");
  fs::AtomicFile out;
  EXPECT_TRUE(out.Open(tmp->path() + "/layer").ok());
  archive::Entry e;
  e.path = "f.txt";
  e.size = content.size();
  e.content = content;
  auto w = archive::WriteLayer({e}, {}, out);
  EXPECT_TRUE(w.ok());
  EXPECT_TRUE(out.Commit().ok());
  diff_id = w->diff_id;
  return *fs::ReadSmallFile(tmp->path() + "/layer");
}

// An image of one layer per content; returns its manifest's descriptor.
oci::Descriptor MakeImage(FakeStore& store, const std::vector<std::string>& contents) {
  oci::Json cfg = oci::NewImageConfig("linux", "amd64");
  oci::Manifest m;
  for (const auto& c : contents) {
    oci::Digest diff_id;
    m.layers.push_back(store.Add(GzipLayer(c, diff_id), oci::kMediaTypeLayerGzip));
    oci::AppendLayerToConfig(cfg, diff_id, {"1970-01-01T00:00:00Z", "test", false});
  }
  m.config = store.Add(*oci::CanonicalJson(cfg), oci::kMediaTypeConfig);
  return store.Add(*oci::SerializeManifest(m), oci::kMediaTypeManifest);
}

void Flip(FakeStore& store, const oci::Digest& d) {
  std::string& b = store.blobs[d];
  b[b.size() / 2] ^= 1;
}

std::shared_ptr<const oci::Image> ImageOf(const std::shared_ptr<FakeStore>& store, const oci::Descriptor& d) {
  auto node = oci::OpenNode(store, d);
  EXPECT_TRUE(node.ok()) << node.error().message;
  return node->image;
}

}  // namespace

TEST(Verify, CleanImageHasNoProblemsAndDamageIsNamed) {
  FakeStore store;
  auto top = MakeImage(store, {"hello", "world"});
  auto report = Verify(store, top);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->blobs_checked, 4);  // manifest, config, two layers
  EXPECT_EQ(report->layers_decompressed, 2);

  auto m = *oci::ParseManifest(store.blobs[top.digest], "m");
  for (const auto& victim : {top.digest, m.config.digest, m.layers[1].digest}) {
    FakeStore damaged = store;
    Flip(damaged, victim);
    report = Verify(damaged, top);
    ASSERT_TRUE(report.ok());
    ASSERT_FALSE(report->problems.empty()) << victim.str();
    EXPECT_EQ(report->problems[0].blob, victim.str());
  }
  FakeStore missing = store;
  missing.blobs.erase(m.layers[0].digest);
  report = Verify(missing, top);
  ASSERT_EQ(report->problems.size(), 1u);
  EXPECT_EQ(report->problems[0].what, "missing");
}

TEST(Verify, AnIndexIsCheckedChildByChildOrForOnePlatform) {
  FakeStore store;
  oci::Index idx;
  for (const char* arch : {"amd64", "arm64"}) {
    auto child = MakeImage(store, {arch});
    child.platform = oci::Platform{"linux", arch, ""};
    idx.manifests.push_back(child);
  }
  auto top = store.Add(*oci::SerializeIndex(idx), oci::kMediaTypeIndex);
  auto report = Verify(store, top);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->manifests.size(), 3u);
  EXPECT_EQ(report->blobs_checked, 1 + 2 * 3);

  Flip(store, oci::ParseManifest(store.blobs[idx.manifests[1].digest], "m")->layers[0].digest);
  VerifyOptions amd64;
  amd64.platform = oci::Platform{"linux", "amd64", ""};
  report = Verify(store, top, amd64);
  EXPECT_TRUE(report->ok()) << "the damaged arm64 layer is not checked";
  EXPECT_EQ(report->manifests.size(), 2u);
  report = Verify(store, top);
  EXPECT_EQ(report->problems.size(), 1u);
  amd64.platform = oci::Platform{"linux", "s390x", ""};
  EXPECT_EQ(Verify(store, top, amd64).error().kind, ErrorKind::kNotFound);
}

TEST(Verify, AnArtifactHasNoDiffIdsAndAnUnknownMediaTypeIsInvalidInput) {
  FakeStore store;
  oci::Manifest m;
  m.artifact_type = "application/spdx+json";
  m.config = store.Add("{}", oci::kMediaTypeEmpty);
  m.layers.push_back(store.Add("{\"spdxVersion\":\"SPDX-2.3\"}", "application/spdx+json"));
  auto top = store.Add(*oci::SerializeManifest(m), oci::kMediaTypeManifest);
  auto report = Verify(store, top);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->layers_decompressed, 0);
  EXPECT_EQ(report->blobs_checked, 3);

  auto odd = store.Add("{\"schemaVersion\":1}", "application/vnd.docker.distribution.manifest.v1+prettyjws");
  auto refused = Verify(store, odd);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kInvalidInput);
  EXPECT_NE(refused.error().message.find("unsupported manifest media type"), std::string::npos);
}

// Issue 25: verify reads a manifest as every other verb opens it (oci::ManifestMediaType,
// oci::ReadConfig). A `{}` config under the image config media type (BuildKit's
// attestations) makes an artifact, checked blob by blob; a Docker manifest named as an OCI
// manifest verifies as Docker's, with the warning; a config with a rootfs but no diff_ids
// is still a problem.
TEST(Verify, ReadsManifestsAndConfigsAsOpeningAnImageDoes) {
  FakeStore store;
  oci::Manifest attestation;
  attestation.config = store.Add("{}", oci::kMediaTypeConfig);
  attestation.layers.push_back(store.Add(R"({"predicateType":"x"})", "application/vnd.in-toto+json"));
  auto report = Verify(store, store.Add(*oci::SerializeManifest(attestation), oci::kMediaTypeManifest));
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->ok()) << report->problems[0].what;
  EXPECT_EQ(report->blobs_checked, 3);

  oci::Manifest docker;
  docker.media_type = std::string(oci::kMediaTypeDockerManifest);
  docker.config = store.Add(*oci::CanonicalJson(oci::NewImageConfig("linux", "amd64")), oci::kMediaTypeDockerConfig);
  std::vector<std::string> warnings;
  auto previous = oci::SetWarningHandler([&](const std::string& m) { warnings.push_back(m); });
  auto as_oci = Verify(store, store.Add(*oci::SerializeManifest(docker), oci::kMediaTypeManifest));
  oci::SetWarningHandler(previous);
  ASSERT_TRUE(as_oci.ok()) << as_oci.error().message;
  EXPECT_TRUE(as_oci->ok());
  EXPECT_EQ(as_oci->media_type, oci::kMediaTypeDockerManifest);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("fake: manifest sha256:"), std::string::npos) << warnings[0];

  oci::Manifest broken;
  broken.config = store.Add(R"({"rootfs":{"type":"layers"}})", oci::kMediaTypeConfig);
  auto damaged = Verify(store, store.Add(*oci::SerializeManifest(broken), oci::kMediaTypeManifest));
  ASSERT_TRUE(damaged.ok()) << damaged.error().message;
  ASSERT_FALSE(damaged->ok());
  EXPECT_EQ(damaged->problems[0].what, "config: $.rootfs.diff_ids missing");
}

TEST(Verify, KnownDiffIdsSpareTheInflateOnlyForTheBytesTheyWereRecordedFor) {
  auto tmp = fs::TempDir::Create("check-test-");
  FakeStore store;
  auto top = MakeImage(store, {"hello"});
  auto m = *oci::ParseManifest(store.blobs[top.digest], "m");
  const oci::Digest layer = m.layers[0].digest;
  VerifyOptions o;
  o.known = archive::KnownDiffIds::In(tmp->path());

  // The first run inflates and records; the second spares the inflate, re-hashing all.
  EXPECT_EQ(Verify(store, top, o)->layers_decompressed, 1);
  auto report = Verify(store, top, o);
  EXPECT_EQ(report->diff_ids_known, 1);
  EXPECT_EQ(report->layers_decompressed, 0);
  EXPECT_EQ(report->blobs_checked, 3);

  // The record is what decides: a wrong one is a reported mismatch, never a silent pass;
  // decompress_all ignores it and records the true diff_id again.
  o.known.Record(layer, {oci::Digest::Of("not this tar"), 1});
  report = Verify(store, top, o);
  ASSERT_EQ(report->problems.size(), 1u);
  EXPECT_NE(report->problems[0].what.find("uncompressed content hashes to " + oci::Digest::Of("not this tar").str()),
            std::string::npos);
  o.decompress_all = true;
  EXPECT_TRUE(Verify(store, top, o)->ok());
  o.decompress_all = false;
  EXPECT_TRUE(Verify(store, top, o)->ok());

  // Changed bytes do not match the digest the record is for: named, the record unused.
  Flip(store, layer);
  report = Verify(store, top, o);
  ASSERT_FALSE(report->ok());
  EXPECT_EQ(report->problems[0].blob, layer.str());
  EXPECT_EQ(report->problems.size(), 1u);
}

TEST(Verify, ASourceThatNeverEndsIsCutAtTheDescriptorsSize) {
  FakeStore store;
  auto top = MakeImage(store, {"hello"});
  auto m = *oci::ParseManifest(store.blobs[top.digest], "m");
  store.blobs[m.layers[0].digest] += std::string(1 << 20, 'x');
  auto report = Verify(store, top);
  ASSERT_EQ(report->problems.size(), 1u);
  EXPECT_NE(report->problems[0].what.find("more than the"), std::string::npos) << report->problems[0].what;
}

// A big layer read on two cores goes on as a pipeline (read + hash, inflate, hash):
// whatever is wrong with it, the problems named are those one core names.
std::string Noise(size_t n) {
  std::string s(n, '\0');
  uint64_t x = 88172645463325252ull;
  for (char& c : s) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    c = static_cast<char>(x >> 56);
  }
  return s;
}

// An image whose one layer is `blob`, named with `size` and the config's `diff_id`.
oci::Descriptor ImageOfLayer(FakeStore& store, const std::string& blob, int64_t size, const oci::Digest& diff_id) {
  oci::Json cfg = oci::NewImageConfig("linux", "amd64");
  oci::AppendLayerToConfig(cfg, diff_id, {"1970-01-01T00:00:00Z", "test", false});
  oci::Manifest m;
  m.layers.push_back(store.Add(blob, oci::kMediaTypeLayerGzip));
  m.layers[0].size = size;
  m.config = store.Add(*oci::CanonicalJson(cfg), oci::kMediaTypeConfig);
  return store.Add(*oci::SerializeManifest(m), oci::kMediaTypeManifest);
}

std::string Problems(const FakeStore& store, const oci::Descriptor& top, int cpus) {
  VerifyOptions o;
  o.cpus = cpus;
  auto report = Verify(store, top, o);
  if (!report.ok()) return "error: " + report.error().message;
  std::string out = std::to_string(report->layers_decompressed) + " decompressed;";
  for (const auto& p : report->problems) out += " " + p.blob + ": " + p.what + ";";
  return out;
}

// Text inflates slower than it hashes, so the pipeline's reader runs ahead of its inflater.
std::string Text(size_t n) {
  std::string s;
  for (uint64_t i = 0; s.size() < n; ++i) s += "entry " + std::to_string(i * 2654435761u % 1000003) + " of a log\n";
  return s;
}

TEST(Verify, ABigLayerOnAPipelineFindsWhatOneCoreFinds) {
  oci::Digest diff_id;
  const std::string gz = GzipLayer(Noise(3 << 20) + Text(16 << 20), diff_id);
  std::string flipped = gz;
  flipped[gz.size() * 6 / 10] ^= 0x5a;
  const std::string junk = Noise(4 << 20);  // starts with no gzip magic
  const int64_t n = static_cast<int64_t>(gz.size());
  struct Case {
    const char* what;
    std::string blob;
    int64_t size;
    oci::Digest diff_id;
  };
  const std::vector<Case> cases = {
      {"clean", gz, n, diff_id},
      {"wrong diff_id", gz, n, oci::Digest::Of("another tar")},
      {"wrong digest (a flipped byte)", flipped, n, diff_id},
      {"truncated", gz.substr(0, gz.size() * 7 / 10), n, diff_id},
      {"longer than named", gz + junk, n, diff_id},
      // The junk is refused at once; the read ahead reaches the named size after it.
      {"junk, then past the named size", gz + junk, n + (2 << 20), diff_id},
  };
  for (const auto& c : cases) {
    FakeStore store;
    auto top = ImageOfLayer(store, c.blob, c.size, c.diff_id);
    std::string one = Problems(store, top, 1);
    EXPECT_EQ(Problems(store, top, 2), one) << c.what;
    EXPECT_EQ(one == "1 decompressed;", std::string(c.what) == "clean") << c.what << ": " << one;
  }
}

// An index of `n` entries, each naming `child` (the amplification of issue 24: each entry
// once re-read the whole image).
oci::Descriptor IndexOf(FakeStore& store, const oci::Descriptor& child, size_t n) {
  oci::Index idx;
  idx.manifests.assign(n, child);
  return store.Add(*oci::SerializeIndex(idx), oci::kMediaTypeIndex);
}

uint64_t BytesOf(const FakeStore& store) {
  uint64_t n = 0;
  for (const auto& [d, bytes] : store.blobs) n += bytes.size();
  return n;
}

TEST(Verify, EachUniqueBlobIsReadOnceHoweverManyEntriesNameIt) {
  FakeStore store;
  auto image = MakeImage(store, {"hello", "world"});
  const uint64_t image_bytes = BytesOf(store);
  auto top = IndexOf(store, image, 20000);
  auto report = Verify(store, top);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->reads, 5u);  // index, manifest, config, two layers
  EXPECT_EQ(report->bytes_read, image_bytes + static_cast<uint64_t>(top.size));
  EXPECT_EQ(report->blobs_checked, 5);
  EXPECT_EQ(report->manifests.size(), 2u);
  EXPECT_EQ(report->verdicts_reused, 19999);

  // A damaged layer: read once, and still every entry that names the image is named.
  auto m = *oci::ParseManifest(store.blobs[image.digest], "m");
  Flip(store, m.layers[1].digest);
  report = Verify(store, top);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->reads, 5u);
  EXPECT_EQ(report->bytes_read, image_bytes + static_cast<uint64_t>(top.size));
  ASSERT_EQ(report->problems.size(), 20000u);
  EXPECT_EQ(report->problems[0].blob, m.layers[1].digest.str());
  for (size_t i = 1; i < report->problems.size(); ++i) {
    ASSERT_EQ(report->problems[i].blob, image.digest.str());
    ASSERT_NE(report->problems[i].what.find("manifests[" + std::to_string(i) + "] names it again: damaged"),
              std::string::npos)
        << report->problems[i].what;
  }

  // A missing manifest: asked for once, missing for every entry.
  FakeStore gone = store;
  gone.blobs.erase(image.digest);
  report = Verify(gone, IndexOf(gone, image, 300));
  ASSERT_EQ(report->problems.size(), 300u);
  EXPECT_EQ(report->reads, 2u);
  for (const auto& p : report->problems) EXPECT_EQ(p.what, "missing");
}

TEST(Verify, ADescriptorWithAnotherSizeIsJudgedByItsOwnClaimWithoutReadingAgain) {
  FakeStore store;
  auto image = MakeImage(store, {"hello"});
  oci::Index idx;
  idx.manifests = {image, image, image};
  idx.manifests[1].size += 7;
  auto top = store.Add(*oci::SerializeIndex(idx), oci::kMediaTypeIndex);
  auto report = Verify(store, top);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->reads, 4u);
  ASSERT_EQ(report->problems.size(), 1u);
  EXPECT_EQ(report->problems[0].blob, image.digest.str());
  EXPECT_EQ(report->problems[0].what,
            "size " + std::to_string(image.size) + ", manifest says " + std::to_string(image.size + 7));

  // Layers the same: two images naming one layer blob, the second with a lying size.
  auto m = *oci::ParseManifest(store.blobs[image.digest], "m");
  oci::Manifest liar = m;
  liar.layers[0].size -= 3;
  auto other = store.Add(*oci::SerializeManifest(liar), oci::kMediaTypeManifest);
  oci::Index two;
  two.manifests = {image, other};
  report = Verify(store, store.Add(*oci::SerializeIndex(two), oci::kMediaTypeIndex));
  ASSERT_EQ(report->problems.size(), 1u);
  EXPECT_EQ(report->problems[0].blob, m.layers[0].digest.str());
  EXPECT_EQ(report->problems[0].what,
            "size " + std::to_string(m.layers[0].size) + ", manifest says " + std::to_string(liar.layers[0].size));
  EXPECT_EQ(report->reads, 5u);  // index, two manifests, the config, the layer: once each
}

// Claims that grow by a byte each over a blob longer than all of them: each read goes at
// least twice as far as the last, so the reads are few and the bytes a small multiple.
TEST(Verify, GrowingSizeClaimsOverALongBlobCostFewReads) {
  FakeStore store;
  std::string blob(1 << 20, 'x');
  auto layer = store.Add(blob, "application/octet-stream");
  oci::Index idx;
  for (int i = 0; i < 200; ++i) {
    oci::Manifest m;
    m.artifact_type = "application/x-test";
    m.config = store.Add("{}", oci::kMediaTypeEmpty);
    m.layers = {layer};
    m.layers[0].size = 4096 + i;
    idx.manifests.push_back(store.Add(*oci::SerializeManifest(m), oci::kMediaTypeManifest));
  }
  auto report = Verify(store, store.Add(*oci::SerializeIndex(idx), oci::kMediaTypeIndex));
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->problems.size(), 200u);
  EXPECT_EQ(report->problems[0].what, "more than the 4096 bytes its descriptor names");
  // 1 index + 200 manifests + 1 config + the layer at most twice.
  EXPECT_LE(report->reads, 1u + 200u + 1u + 2u);
  EXPECT_LT(report->bytes_read, std::size_t{4} * 8192 + BytesOf(store) - blob.size());
}

TEST(Verify, ABlobNamedAsAnArtifactAndAsALayerIsInflatedOnce) {
  FakeStore store;
  auto image = MakeImage(store, {"hello"});
  auto m = *oci::ParseManifest(store.blobs[image.digest], "m");
  oci::Manifest artifact;
  artifact.artifact_type = "application/x-test";
  artifact.config = store.Add("{}", oci::kMediaTypeEmpty);
  artifact.layers = {m.layers[0], m.layers[0]};
  artifact.layers[0].media_type = "application/octet-stream";
  artifact.layers[1].media_type = "application/octet-stream";
  oci::Index idx;
  idx.manifests = {store.Add(*oci::SerializeManifest(artifact), oci::kMediaTypeManifest), image};
  auto report = Verify(store, store.Add(*oci::SerializeIndex(idx), oci::kMediaTypeIndex));
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->layers_decompressed, 1);
  // index, two manifests, two configs; the layer raw for the artifact, inflated for the image.
  EXPECT_EQ(report->reads, 7u);
}

TEST(Diff, NamesTheChangedFile) {
  auto store = std::make_shared<FakeStore>();
  auto a = ImageOf(store, MakeImage(*store, {"one"}));
  auto b = ImageOf(store, MakeImage(*store, {"two"}));
  auto same = DiffImages(*a, *a);
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->identical());
  auto d = DiffImages(*a, *b);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_FALSE(d->identical());
  EXPECT_TRUE(d->config.empty());
  ASSERT_EQ(d->layers.size(), 1u);
  EXPECT_EQ(d->layers[0].index, 1u);
  ASSERT_EQ(d->layers[0].changes.size(), 1u);
  EXPECT_EQ(d->layers[0].changes[0].path, "f.txt");
  EXPECT_EQ(d->layers[0].changes[0].field, "content");
  EXPECT_EQ(d->layers[0].changes[0].a, oci::Digest::Of("one").str());
}

// Issue 24: a layer blob named at many positions is listed once per diff.
TEST(Diff, ALayerNamedAtManyPositionsIsListedOnce) {
  auto store = std::make_shared<FakeStore>();
  oci::Digest diff_id;
  auto layer = store->Add(GzipLayer("same", diff_id), oci::kMediaTypeLayerGzip);
  auto image = [&](const std::string& label) {
    oci::Json cfg = oci::NewImageConfig("linux", "amd64");
    cfg["config"]["Labels"] = {{"v", label}};
    oci::Manifest m;
    for (int i = 0; i < 100; ++i) {
      // Distinct diff_ids (every position differs between the two images), one blob.
      m.layers.push_back(layer);
      oci::AppendLayerToConfig(cfg, oci::Digest::Of(label + std::to_string(i)), {"1970-01-01T00:00:00Z", "t", false});
    }
    m.config = store->Add(*oci::CanonicalJson(cfg), oci::kMediaTypeConfig);
    return store->Add(*oci::SerializeManifest(m), oci::kMediaTypeManifest);
  };
  auto a = image("a"), b = image("b");
  auto counted = std::make_shared<oci::CountingStore>(*store);
  auto d = DiffImages(*oci::OpenNode(counted, a)->image, *oci::OpenNode(counted, b)->image);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->layers.size(), 100u);
  EXPECT_EQ(counted->counts().reads, 2u * 2u + 1u);  // two manifests and configs, the layer once
}

}  // namespace imgtool::check
