#include "sign/signature_image.h"

#include "fs/atomic_file.h"
#include "layout/layout_reader.h"
#include "layout/layout_writer.h"
#include "oci/canonical_json.h"
#include "oci/media_types.h"

namespace imgtool::sign {

namespace {

constexpr uint64_t kMaxPayload = 4u << 20;                 // payloads are small JSON; refuse a blob bomb
constexpr const char* kZeroTime = "0001-01-01T00:00:00Z";  // Go's zero time, as cosign's config has

}  // namespace

std::string ArtifactTag(const oci::Digest& image, std::string_view suffix) {
  return "sha256-" + image.hex() + std::string(suffix);
}

Result<std::vector<SignatureLayer>> ReadSignatureImage(const std::string& dir, const std::string& tag) {
  std::vector<SignatureLayer> out;
  auto index = layout::ReadIndex(dir);
  if (!index.ok()) return index.error();
  auto desc = layout::ResolveManifest(dir, tag);
  if (!desc.ok()) {
    if (desc.error().kind == ErrorKind::kNotFound) return out;
    return desc.error();
  }
  auto raw = layout::ReadVerifiedBlob(dir, *desc);
  if (!raw.ok()) return raw.error().Context(tag);
  auto m = oci::ParseManifest(*raw, "signature manifest " + desc->digest.Short());
  if (!m.ok()) return m.error();
  for (const auto& l : m->layers) {
    auto bytes = fs::ReadSmallFile(layout::BlobPathIn(dir, l.digest), kMaxPayload);
    if (!bytes.ok()) return bytes.error().Context(tag + ": layer " + l.digest.str());
    out.push_back({l, *bytes});
  }
  return out;
}

Result<oci::Digest> WriteSignatureImage(const std::string& dir, const std::string& tag,
                                        const std::vector<SignatureLayer>& layers) {
  auto w = layout::LayoutWriter::Open(dir);
  if (!w.ok()) return w.error();
  oci::Json diff_ids = oci::Json::array(), history = oci::Json::array(), descs = oci::Json::array();
  for (const auto& l : layers) {
    auto d = w->WriteBlob(l.payload, l.descriptor.media_type);
    if (!d.ok()) return d.error();
    if (d->digest != l.descriptor.digest) {
      return MakeError(ErrorKind::kInternal, "signature layer " + l.descriptor.digest.str() + ": payload differs");
    }
    diff_ids.push_back(d->digest.str());
    history.push_back({{"created", kZeroTime}});
    descs.push_back(oci::DescriptorToJson(l.descriptor));
  }
  oci::Json config = {{"architecture", ""},
                      {"config", oci::Json::object()},
                      {"created", kZeroTime},
                      {"history", history},
                      {"os", ""},
                      {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}}};
  auto config_bytes = oci::CanonicalJson(config);
  if (!config_bytes.ok()) return config_bytes.error();
  auto cfg = w->WriteBlob(*config_bytes, oci::kMediaTypeConfig);
  if (!cfg.ok()) return cfg.error();
  oci::Json manifest = {{"schemaVersion", 2},
                        {"mediaType", oci::kMediaTypeManifest},
                        {"config", oci::DescriptorToJson(*cfg)},
                        {"layers", descs}};
  auto bytes = oci::CanonicalJson(manifest);
  if (!bytes.ok()) return bytes.error();
  auto desc = w->WriteBlob(*bytes, oci::kMediaTypeManifest);
  if (!desc.ok()) return desc.error();
  IMGTOOL_TRY(w->SetTag(*desc, tag));
  return desc->digest;
}

}  // namespace imgtool::sign
