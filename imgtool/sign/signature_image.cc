#include "sign/signature_image.h"

#include "oci/canonical_json.h"
#include "oci/media_types.h"
#include "oci/memory_store.h"

namespace imgtool::sign {

namespace {

constexpr uint64_t kMaxPayload = 4u << 20;                 // payloads are small JSON; refuse a blob bomb
constexpr const char* kZeroTime = "0001-01-01T00:00:00Z";  // Go's zero time, as cosign's config has

}  // namespace

std::string ArtifactTag(const oci::Digest& image, std::string_view suffix) {
  return "sha256-" + image.hex() + std::string(suffix);
}

Result<std::vector<SignatureLayer>> SignatureLayers(const oci::BlobStore& store, const oci::Manifest& manifest) {
  std::vector<SignatureLayer> out;
  for (const auto& l : manifest.layers) {
    const std::string what = "signature layer " + l.digest.str();
    if (static_cast<uint64_t>(l.size) > kMaxPayload) {
      return MakeError(ErrorKind::kInvalidInput, what + ": " + std::to_string(l.size) + " bytes; too large");
    }
    auto raw = store.OpenBlob(l);
    if (!raw.ok()) return raw.error().Context(what);
    oci::LimitReader limited(std::move(*raw), kMaxPayload, what);
    auto bytes = oci::ReadAll(limited, kMaxPayload, what);
    if (!bytes.ok()) return bytes.error();
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
