// OpenNode over a MemoryStore (imgtool/oci/image.h): the walk every verb starts with.
// The store holds two small images and their index, as a registry or a layout would;
// the input is one more manifest, opened as the top node, and then walked as far as
// it leads (children opened, layers streamed and checked). A fuzzer cannot forge
// sha256, so the seeds (IMGTOOL_FUZZ_WRITE_SEEDS) are the real manifests: mutations
// that keep a digest reach the store's blobs, the rest test the refusals. The store also
// holds a chain of indexes one level deeper than kMaxIndexDepth (seed chain.json is its
// top), so the walk reaches the shared index-depth refusal; inputs may be nesting recipes
// (fuzz_util.h, ExpandNesting) for documents nested past kMaxJsonDepth. Issue 25: it also
// holds a Docker image and a BuildKit-like attestation (`{}` config), and the seed
// mixed-index.json names the Docker image as an OCI manifest (oci::ManifestMediaType) and
// the attestation (oci::ReadConfig); every image's config() is asked for.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "fuzz_util.h"
#include "oci/canonical_json.h"
#include "oci/image.h"
#include "oci/image_config.h"
#include "oci/memory_store.h"

namespace {

using namespace imgtool::oci;

struct Base {
  std::shared_ptr<MemoryStore> store = std::make_shared<MemoryStore>("fuzz");
  std::vector<std::pair<std::string, std::string>> manifests;  // seed name, bytes
};

Descriptor AddImage(Base& b, const std::string& arch, bool artifact) {
  Manifest m;
  Json config = NewImageConfig("linux", arch);
  config["rootfs"]["diff_ids"] = Json::array({Digest::Of("layer " + arch).str()});
  m.config = b.store->Add(*CanonicalJson(config), "application/vnd.oci.image.config.v1+json");
  m.layers.push_back(b.store->Add("layer " + arch, "application/vnd.oci.image.layer.v1.tar"));
  if (artifact) {
    m.artifact_type = "application/vnd.example.sbom";
    m.config = b.store->Add("{}", "application/vnd.oci.empty.v1+json");
  }
  std::string bytes = *SerializeManifest(m);
  b.manifests.emplace_back(arch + (artifact ? "-artifact" : "") + ".json", bytes);
  Descriptor d = b.store->Add(bytes, m.media_type);
  d.platform = Platform{"linux", arch, ""};
  return d;
}

// A Docker schema 2 image, and an OCI manifest whose image-config-typed config is `{}`.
std::vector<Descriptor> AddOtherTools(Base& b) {
  Manifest docker;
  docker.media_type = "application/vnd.docker.distribution.manifest.v2+json";
  docker.config =
      b.store->Add(*CanonicalJson(NewImageConfig("linux", "s390x")), "application/vnd.docker.container.image.v1+json");
  Descriptor named_oci = b.store->Add(*SerializeManifest(docker), "application/vnd.oci.image.manifest.v1+json");
  Manifest attestation;
  attestation.config = b.store->Add("{}", "application/vnd.oci.image.config.v1+json");
  attestation.layers.push_back(b.store->Add("{\"predicateType\":\"x\"}", "application/vnd.in-toto+json"));
  Descriptor att = b.store->Add(*SerializeManifest(attestation), attestation.media_type);
  att.platform = Platform{"unknown", "unknown", ""};
  return {named_oci, att};
}

// kMaxIndexDepth + 1 indexes, each the only entry of the one above, around `image`: the
// top's bytes.
std::string IndexChain(Base& b, Descriptor image) {
  std::string bytes;
  for (int level = 0; level <= kMaxIndexDepth; ++level) {
    Index idx;
    idx.manifests = {image};
    bytes = *SerializeIndex(idx);
    image = b.store->Add(bytes, idx.media_type);
    image.platform = Platform{"linux", "amd64", ""};
  }
  return bytes;
}

const Base& TheBase() {
  static const Base base = [] {
    Base b;
    Index idx;
    idx.manifests = {AddImage(b, "amd64", false), AddImage(b, "arm64", false)};
    (void)AddImage(b, "riscv64", true);
    b.manifests.emplace_back("index.json", *SerializeIndex(idx));
    b.manifests.emplace_back("chain.json", IndexChain(b, idx.manifests[0]));
    Index mixed;
    mixed.manifests = AddOtherTools(b);
    b.manifests.emplace_back("mixed-index.json", *SerializeIndex(mixed));
    return b;
  }();
  return base;
}

// Every child, as far down as ImageIndex::Child lets the walk go; layers streamed.
void Walk(const Node& node) {
  if (node.image) {
    if (const auto& config = node.image->config(); config.ok()) (void)ConfigPlatform(*config);
    for (const auto& l : node.image->layers()) {
      if (auto r = l->Open(); r.ok()) (void)Drain(**r);
    }
    return;
  }
  for (const auto& c : node.index->children()) {
    if (auto child = node.index->Child(c); child.ok()) Walk(*child);
  }
  (void)node.index->ChildFor(Platform{"linux", "arm64", ""});
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  imgtool::fuzz::MaybeWriteSeeds([] {
    imgtool::fuzz::Seeds seeds = TheBase().manifests;
    seeds.emplace_back("not-json", "{\"schemaVersion\":2,");
    return seeds;
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto store = std::make_shared<MemoryStore>(*TheBase().store);
  Descriptor top = store->Add(imgtool::fuzz::NestedInput(data, size), "");
  auto node = OpenNode(store, top);
  if (node.ok()) Walk(*node);
  return 0;
}
