#include "sign/signature_image.h"

#include <algorithm>
#include <map>

#include "oci/canonical_json.h"
#include "oci/media_types.h"
#include "oci/memory_store.h"

namespace imgtool::sign {

namespace {

constexpr uint64_t kMaxPayload = 4u << 20;  // payloads are small JSON; refuse a blob bomb
// All layers' payloads together, repeated ones too: each is held and verified per layer,
// so 1,000 layers naming one 4 MiB payload would cost 4 GB of memory and hashing.
constexpr uint64_t kMaxPayloads = 16u << 20;
constexpr const char* kZeroTime = "0001-01-01T00:00:00Z";  // Go's zero time, as cosign's config has

}  // namespace

std::string ArtifactTag(const oci::Digest& image, std::string_view suffix) {
  return "sha256-" + image.hex() + std::string(suffix);
}

Result<std::vector<SignatureLayer>> SignatureLayers(const oci::BlobStore& store, const oci::Manifest& manifest) {
  uint64_t total = 0;
  for (const auto& l : manifest.layers) total += std::min<uint64_t>(std::max<int64_t>(l.size, 0), kMaxPayload + 1);
  if (total > kMaxPayloads) {
    return MakeError(ErrorKind::kInvalidInput, "signature manifest: its " + std::to_string(manifest.layers.size()) +
                                                   " layers name " + std::to_string(total) + " bytes; at most " +
                                                   std::to_string(kMaxPayloads) + " are read");
  }
  std::vector<SignatureLayer> out;
  // Each payload is read once, however many layers name it (the verifier judges each layer).
  std::map<oci::Digest, std::string> read;
  for (const auto& l : manifest.layers) {
    const std::string what = "signature layer " + l.digest.str();
    if (static_cast<uint64_t>(l.size) > kMaxPayload) {
      return MakeError(ErrorKind::kInvalidInput, what + ": " + std::to_string(l.size) + " bytes; too large");
    }
    if (auto it = read.find(l.digest); it != read.end()) {
      out.push_back({l, it->second});
      continue;
    }
    auto raw = store.OpenBlob(l);
    if (!raw.ok()) return raw.error().Context(what);
    oci::LimitReader limited(std::move(*raw), kMaxPayload, what);
    auto bytes = oci::ReadAll(limited, kMaxPayload, what);
    if (!bytes.ok()) return bytes.error();
    read.emplace(l.digest, *bytes);
    out.push_back({l, *bytes});
  }
  return out;
}

Result<oci::Node> SignatureImage(const std::vector<SignatureLayer>& layers) {
  auto store = std::make_shared<oci::MemoryStore>("signature image");
  oci::Json diff_ids = oci::Json::array(), history = oci::Json::array();
  oci::Manifest m;
  for (const auto& l : layers) {
    oci::Descriptor d = store->Add(l.payload, l.descriptor.media_type);
    if (d.digest != l.descriptor.digest) {
      return MakeError(ErrorKind::kInternal, "signature layer " + l.descriptor.digest.str() + ": payload differs");
    }
    diff_ids.push_back(d.digest.str());
    history.push_back({{"created", kZeroTime}});
    m.layers.push_back(l.descriptor);
  }
  oci::Json config = {{"architecture", ""},
                      {"config", oci::Json::object()},
                      {"created", kZeroTime},
                      {"history", history},
                      {"os", ""},
                      {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}}};
  auto config_bytes = oci::CanonicalJson(config);
  if (!config_bytes.ok()) return config_bytes.error();
  m.config = store->Add(*config_bytes, oci::kMediaTypeConfig);
  return oci::AddManifest(store, m);
}

}  // namespace imgtool::sign
