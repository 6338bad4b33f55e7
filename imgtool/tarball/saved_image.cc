#include "tarball/saved_image.h"

#include <map>

#include "archive/inflate_reader.h"
#include "fs/hashed_file.h"
#include "oci/canonical_json.h"
#include "oci/image.h"
#include "oci/image_config.h"
#include "oci/list_limit.h"
#include "oci/media_types.h"
#include "oci/quote.h"

namespace imgtool::tarball {

namespace {

std::string Q(std::string_view s) { return oci::Quoted(s, '\''); }

struct ConfigFacts {
  std::string bytes;
  std::vector<oci::Digest> diff_ids;
};

// The config member's exact bytes and its diff_ids, one per layer manifest.json names.
Result<ConfigFacts> ReadConfig(const SavedArchive& a, const SavedImage& item, const std::string& what) {
  auto member = a.index().File(item.config, /*follow=*/true);
  if (!member.ok()) {
    if (member.error().kind != ErrorKind::kNotFound) return member.error().Context(what);
    return MakeError(ErrorKind::kIntegrity, what + ": config " + Q(item.config) + " is missing from the archive");
  }
  ConfigFacts facts;
  auto bytes = a.ReadMember(*member, oci::kMaxConfigBytes, "config " + Q(item.config));
  if (!bytes.ok()) return bytes.error();
  facts.bytes = std::move(*bytes);
  auto json = oci::ParseJson(facts.bytes, what + ": config " + Q(item.config));
  if (!json.ok()) return json.error();
  const oci::Json* ids = nullptr;
  if (json->is_object() && json->contains("rootfs") && (*json)["rootfs"].is_object() &&
      (*json)["rootfs"].contains("diff_ids")) {
    ids = &(*json)["rootfs"]["diff_ids"];
  }
  if (ids != nullptr && ids->is_array()) {
    IMGTOOL_TRY(oci::CheckListLength(ids->size(), what + ": config " + Q(item.config), "diff_ids"));
  }
  auto diff_ids = oci::ConfigDiffIds(*json);
  if (!diff_ids.ok()) return diff_ids.error().Context(what + ": config " + Q(item.config));
  if (diff_ids->size() != item.layers.size()) {
    return MakeError(ErrorKind::kInvalidInput, what + ": manifest.json names " + std::to_string(item.layers.size()) +
                                                   " layers, the config " + std::to_string(diff_ids->size()) +
                                                   " diff_ids");
  }
  facts.diff_ids = std::move(*diff_ids);
  return facts;
}

// How a layer member is stored, and its uncompressed size (what the manifest states). A
// compressed member is inflated once here and must hash to its diff_id.
Result<SavedLayer> ProbeLayer(const std::shared_ptr<const SavedArchive>& a, const TarMember& m,
                              const oci::Digest& diff_id, const std::string& what) {
  auto in = archive::InflateReader(OpenMember(a, m), what);
  if (!in.ok()) return in.error();
  SavedLayer layer{diff_id, m.size, m, in->compression};
  if (in->compression == archive::Compression::kNone) return layer;
  auto inflated = fs::HashingReader(std::move(in->reader)).Finish();
  if (!inflated.ok()) return inflated.error();
  layer.size = inflated->size;
  if (inflated->digest != diff_id) {
    return MakeError(ErrorKind::kIntegrity,
                     what + " inflates to " + inflated->digest.str() + ", not its diff_id " + diff_id.str());
  }
  return layer;
}

// Each diff_id's member, once: a layer repeated in an image is one blob (docker save
// makes the repeat a symlink to the first), and one member may not stand for two.
Result<std::vector<SavedLayer>> ReadLayers(const std::shared_ptr<const SavedArchive>& a, const SavedImage& item,
                                           const std::vector<oci::Digest>& diff_ids, const std::string& what) {
  std::vector<SavedLayer> layers;
  std::map<oci::Digest, bool> seen;
  std::map<std::string, oci::Digest> by_member;
  for (size_t i = 0; i < diff_ids.size(); ++i) {
    if (!seen.emplace(diff_ids[i], true).second) continue;
    std::string layer_what = what + ": layer " + Q(item.layers[i]);
    auto [at, fresh] = by_member.emplace(CleanMemberName(item.layers[i]), diff_ids[i]);
    if (!fresh && at->second != diff_ids[i]) {
      return MakeError(ErrorKind::kInvalidInput, layer_what + " stands for two diff_ids");
    }
    auto member = a->index().File(item.layers[i], /*follow=*/true);
    if (!member.ok()) {
      if (member.error().kind != ErrorKind::kNotFound) return member.error().Context(what);
      return MakeError(ErrorKind::kIntegrity,
                       layer_what + " (diff_id " + diff_ids[i].str() + ") is missing from the archive");
    }
    auto layer = ProbeLayer(a, *member, diff_ids[i], layer_what);
    if (!layer.ok()) return layer.error();
    layers.push_back(std::move(*layer));
  }
  return layers;
}

std::string Descriptor(std::string_view media_type, uint64_t size, const oci::Digest& digest) {
  return R"({"mediaType":")" + std::string(media_type) + R"(","size":)" + std::to_string(size) + R"(,"digest":")" +
         digest.str() + R"("})";
}

}  // namespace

std::string SchemaTwoManifest(const oci::Digest& config, uint64_t config_size,
                              const std::vector<std::pair<oci::Digest, uint64_t>>& layers) {
  std::string out = R"({"schemaVersion":2,"mediaType":")" + std::string(oci::kMediaTypeDockerManifest) +
                    R"(","config":)" + Descriptor(oci::kMediaTypeDockerConfig, config_size, config) + R"(,"layers":[)";
  for (size_t i = 0; i < layers.size(); ++i) {
    if (i > 0) out += ',';
    out += Descriptor(oci::kMediaTypeDockerLayerGzip, layers[i].second, layers[i].first);
  }
  return out + "]}";
}

Result<SynthesizedImage> SynthesizeImage(const std::shared_ptr<const SavedArchive>& archive, size_t index) {
  const SavedImage& item = archive->images().at(index);
  const std::string what = "image @" + std::to_string(index);
  auto config = ReadConfig(*archive, item, what);
  if (!config.ok()) return config.error();
  auto layers = ReadLayers(archive, item, config->diff_ids, what);
  if (!layers.ok()) return layers.error();
  SynthesizedImage image;
  image.config = std::move(config->bytes);
  image.config_digest = oci::Digest::Of(image.config);
  image.layers = std::move(*layers);
  std::map<oci::Digest, uint64_t> sizes;
  for (const auto& l : image.layers) sizes[l.diff_id] = l.size;
  std::vector<std::pair<oci::Digest, uint64_t>> listed;  // every diff_id, repeats too, as skopeo lists them
  for (const auto& d : config->diff_ids) listed.emplace_back(d, sizes[d]);
  image.manifest = SchemaTwoManifest(image.config_digest, image.config.size(), listed);
  image.descriptor = oci::Descriptor{std::string(oci::kMediaTypeDockerManifest),
                                     oci::Digest::Of(image.manifest),
                                     static_cast<int64_t>(image.manifest.size()),
                                     {},
                                     {},
                                     {}};
  return image;
}

}  // namespace imgtool::tarball
