// OpenNode over a MemoryStore (imgtool/oci/image.h): the walk every verb starts with.
// The store holds two small images and their index, as a registry or a layout would;
// the input is one more manifest, opened as the top node, and then walked as far as
// it leads (children opened, layers streamed and checked). A fuzzer cannot forge
// sha256, so the seeds (IMGTOOL_FUZZ_WRITE_SEEDS) are the real manifests: mutations
// that keep a digest reach the store's blobs, the rest test the refusals.
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

const Base& TheBase() {
  static const Base base = [] {
    Base b;
    Index idx;
    idx.manifests = {AddImage(b, "amd64", false), AddImage(b, "arm64", false)};
    (void)AddImage(b, "riscv64", true);
    b.manifests.emplace_back("index.json", *SerializeIndex(idx));
    return b;
  }();
  return base;
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
  Descriptor top = store->Add(std::string(imgtool::fuzz::Bytes(data, size)), "");
  auto node = OpenNode(store, top);
  if (!node.ok()) return 0;
  if (node->is_index()) {
    for (const auto& c : node->index->children()) {
      auto child = node->index->Child(c);
      if (child.ok() && child->image) {
        for (const auto& l : child->image->layers()) {
          if (auto r = l->Open(); r.ok()) (void)Drain(**r);
        }
      }
    }
    (void)node->index->ChildFor(Platform{"linux", "arm64", ""});
  } else {
    for (const auto& l : node->image->layers()) {
      if (auto r = l->Open(); r.ok()) (void)Drain(**r);
    }
  }
  return 0;
}
