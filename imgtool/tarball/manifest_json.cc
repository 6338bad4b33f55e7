#include "tarball/manifest_json.h"

#include "oci/canonical_json.h"
#include "oci/list_limit.h"

namespace imgtool::tarball {

namespace {

Error Bad(const std::string& what, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, "manifest.json " + what + ": " + why);
}

// A list of strings; null or absent is empty (Go decodes both to a nil slice).
Result<std::vector<std::string>> Strings(const oci::Json& item, const char* key, const std::string& what) {
  auto it = item.find(key);
  if (it == item.end() || it->is_null()) return std::vector<std::string>();
  if (!it->is_array()) return Bad(what, std::string(key) + " is not a list");
  IMGTOOL_TRY(oci::CheckListLength(it->size(), "manifest.json " + what + ": " + key, "entries"));
  std::vector<std::string> out;
  out.reserve(it->size());
  for (const auto& s : *it) {
    if (!s.is_string()) return Bad(what, std::string(key) + " holds something that is not a string");
    out.push_back(s.get<std::string>());
  }
  return out;
}

Result<SavedImage> ParseItem(const oci::Json& item, const std::string& what) {
  if (!item.is_object()) return Bad(what, "not an object");
  SavedImage image;
  auto config = item.find("Config");
  if (config == item.end() || !config->is_string() || config->get<std::string>().empty()) {
    return Bad(what, "Config is missing or not a member name");
  }
  image.config = config->get<std::string>();
  auto tags = Strings(item, "RepoTags", what);
  if (!tags.ok()) return tags.error();
  image.repo_tags = std::move(*tags);
  auto layers = Strings(item, "Layers", what);
  if (!layers.ok()) return layers.error();
  image.layers = std::move(*layers);
  return image;
}

}  // namespace

Result<std::vector<SavedImage>> ParseManifestJson(std::string_view bytes) {
  if (bytes.size() > kMaxManifestJsonBytes) {
    return MakeError(ErrorKind::kInvalidInput, "manifest.json: larger than 1 MiB; refusing it");
  }
  auto doc = oci::ParseJson(bytes, "manifest.json");
  if (!doc.ok()) return doc.error();
  if (!doc->is_array()) return MakeError(ErrorKind::kInvalidInput, "manifest.json: not a list of images");
  IMGTOOL_TRY(oci::CheckListLength(doc->size(), "manifest.json", "images"));
  std::vector<SavedImage> images;
  images.reserve(doc->size());
  for (size_t i = 0; i < doc->size(); ++i) {
    auto image = ParseItem((*doc)[i], "image @" + std::to_string(i));
    if (!image.ok()) return image.error();
    images.push_back(std::move(*image));
  }
  return images;
}

Result<std::string> ManifestJsonBytes(const std::vector<SavedImage>& images) {
  oci::Json doc = oci::Json::array();
  for (const auto& image : images) {
    doc.push_back({{"Config", image.config}, {"RepoTags", image.repo_tags}, {"Layers", image.layers}});
  }
  return oci::CanonicalJson(doc);
}

Result<std::string> RepositoriesBytes(const std::vector<RepositoryTag>& tags) {
  oci::Json doc = oci::Json::object();
  for (const auto& t : tags) doc[t.name][t.tag] = t.top_layer;
  return oci::CanonicalJson(doc);
}

}  // namespace imgtool::tarball
