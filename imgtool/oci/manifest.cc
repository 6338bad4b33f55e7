#include "oci/manifest.h"

#include "oci/list_limit.h"
#include "oci/media_types.h"

#include <vector>

namespace imgtool::oci {

namespace {

// Members are read by type throughout: nlohmann's value() throws when a member has
// another type ("schemaVersion": "2"), and these bytes are any registry's or layout's.
bool SchemaVersion2(const Json& j) {
  auto v = j.find("schemaVersion");
  return v != j.end() && v->is_number() && *v == 2;
}

Error Bad(const std::string& where, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, where + ": " + why);
}

Result<std::map<std::string, std::string>> StringMap(const Json& j, const std::string& where) {
  std::map<std::string, std::string> out;
  if (!j.is_object()) return Bad(where, "want an object of strings");
  for (const auto& [k, v] : j.items()) {
    if (!v.is_string()) return Bad(where + "." + k, "want a string");
    out[k] = v.get<std::string>();
  }
  return out;
}

// OCI 1.1's artifactType and subject, shared by manifests and indexes. Declared ahead:
// it parses a descriptor (defined below).
Status ArtifactFields(const Json& j, const std::string& what, std::string& artifact_type,
                      std::optional<Descriptor>& subject) {
  if (j.contains("artifactType")) {
    if (!j["artifactType"].is_string()) return Bad(what + ": $.artifactType", "want a string");
    artifact_type = j["artifactType"].get<std::string>();
  }
  if (j.contains("subject")) {
    auto d = DescriptorFromJson(j["subject"], what + ": $.subject");
    if (!d.ok()) return d.error();
    subject = *d;
  }
  return Status::Ok();
}

}  // namespace

Result<Platform> ParsePlatform(const std::string& text) {
  Platform p;
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t slash; (slash = text.find('/', start)) != std::string::npos; start = slash + 1) {
    parts.push_back(text.substr(start, slash - start));
  }
  parts.push_back(text.substr(start));
  bool empty_part = false;
  for (const auto& part : parts) empty_part = empty_part || part.empty();
  if (parts.size() < 2 || parts.size() > 3 || empty_part) {
    return Bad("platform '" + text + "'", "want OS/ARCH[/VARIANT], e.g. linux/amd64 or linux/arm64/v8");
  }
  p.os = parts[0];
  p.architecture = parts[1];
  if (parts.size() == 3) p.variant = parts[2];
  return p;
}

std::string PlatformString(const Platform& p) {
  return p.os + "/" + p.architecture + (p.variant.empty() ? "" : "/" + p.variant);
}

bool PlatformMatches(const Platform& want, const Platform& have) {
  if (want.os != have.os || want.architecture != have.architecture) return false;
  if (want.variant.empty()) return true;
  std::string variant = have.variant;
  if (variant.empty() && have.architecture == "arm64") variant = "v8";
  return variant == want.variant;
}

Json DescriptorToJson(const Descriptor& d) {
  Json j = {{"mediaType", d.media_type}, {"digest", d.digest.str()}, {"size", d.size}};
  if (!d.artifact_type.empty()) j["artifactType"] = d.artifact_type;
  if (!d.annotations.empty()) j["annotations"] = d.annotations;
  if (d.platform) {
    Json p = {{"os", d.platform->os}, {"architecture", d.platform->architecture}};
    if (!d.platform->variant.empty()) p["variant"] = d.platform->variant;
    j["platform"] = p;
  }
  return j;
}

Result<Descriptor> DescriptorFromJson(const Json& j, const std::string& where) {
  if (!j.is_object()) return Bad(where, "want an object");
  Descriptor d;
  if (!j.contains("mediaType") || !j["mediaType"].is_string()) return Bad(where, "mediaType missing");
  d.media_type = j["mediaType"].get<std::string>();
  if (!j.contains("digest") || !j["digest"].is_string()) return Bad(where, "digest missing");
  auto digest = Digest::Parse(j["digest"].get<std::string>());
  if (!digest.ok()) return digest.error().Context(where);
  d.digest = *digest;
  if (!j.contains("size") || !j["size"].is_number_integer() || j["size"].get<int64_t>() < 0) {
    return Bad(where, "size missing or negative");
  }
  d.size = j["size"].get<int64_t>();
  if (j.contains("artifactType")) {
    if (!j["artifactType"].is_string()) return Bad(where + ".artifactType", "want a string");
    d.artifact_type = j["artifactType"].get<std::string>();
  }
  if (j.contains("annotations")) {
    auto a = StringMap(j["annotations"], where + ".annotations");
    if (!a.ok()) return a.error();
    d.annotations = *a;
  }
  if (j.contains("platform")) {
    const Json& p = j["platform"];
    if (!p.is_object() || !p.value("os", Json()).is_string() || !p.value("architecture", Json()).is_string()) {
      return Bad(where + ".platform", "want os and architecture strings");
    }
    if (p.contains("variant") && !p["variant"].is_string()) return Bad(where + ".platform.variant", "want a string");
    d.platform = Platform{p["os"].get<std::string>(), p["architecture"].get<std::string>(),
                          p.contains("variant") ? p["variant"].get<std::string>() : std::string()};
  }
  return d;
}

Result<std::string> SerializeManifest(const Manifest& m) {
  Json layers = Json::array();
  for (const auto& l : m.layers) layers.push_back(DescriptorToJson(l));
  Json j = {
      {"schemaVersion", 2}, {"mediaType", m.media_type}, {"config", DescriptorToJson(m.config)}, {"layers", layers}};
  if (!m.artifact_type.empty()) j["artifactType"] = m.artifact_type;
  if (m.subject) j["subject"] = DescriptorToJson(*m.subject);
  if (!m.annotations.empty()) j["annotations"] = m.annotations;
  return CanonicalJson(j);
}

Result<Manifest> ParseManifest(std::string_view raw, const std::string& what) {
  auto parsed = ParseJson(raw, what);
  if (!parsed.ok()) return parsed.error();
  const Json& j = *parsed;
  if (!j.is_object()) return Bad(what, "want a JSON object");
  if (!SchemaVersion2(j)) return Bad(what, "schemaVersion must be 2");
  Manifest m;
  // Some writers (umoci) omit the optional top-level mediaType.
  if (j.contains("mediaType") && !j["mediaType"].is_string()) {
    return Bad(what, "not an image manifest: mediaType " + j["mediaType"].dump());
  }
  m.media_type = j.contains("mediaType") ? j["mediaType"].get<std::string>() : std::string(kMediaTypeManifest);
  if (!IsManifestMediaType(m.media_type)) return Bad(what, "not an image manifest: " + m.media_type);
  if (!j.contains("config")) return Bad(what, "config missing");
  auto config = DescriptorFromJson(j["config"], what + ": $.config");
  if (!config.ok()) return config.error();
  m.config = *config;
  if (!j.contains("layers") || !j["layers"].is_array()) return Bad(what, "layers missing");
  // Every reader applies or fetches each layer in turn (a rootfs view, a diff, a copy).
  IMGTOOL_TRY(CheckListLength(j["layers"].size(), what + ": $.layers", "layers"));
  for (size_t i = 0; i < j["layers"].size(); ++i) {
    auto l = DescriptorFromJson(j["layers"][i], what + ": $.layers[" + std::to_string(i) + "]");
    if (!l.ok()) return l.error();
    m.layers.push_back(*l);
  }
  IMGTOOL_TRY(ArtifactFields(j, what, m.artifact_type, m.subject));
  if (j.contains("annotations")) {
    auto a = StringMap(j["annotations"], what + ": $.annotations");
    if (!a.ok()) return a.error();
    m.annotations = *a;
  }
  return m;
}

Result<std::string> SerializeIndex(const Index& index) {
  Json manifests = Json::array();
  for (const auto& d : index.manifests) manifests.push_back(DescriptorToJson(d));
  Json j = {{"schemaVersion", 2}, {"mediaType", index.media_type}, {"manifests", manifests}};
  if (!index.artifact_type.empty()) j["artifactType"] = index.artifact_type;
  if (index.subject) j["subject"] = DescriptorToJson(*index.subject);
  if (!index.annotations.empty()) j["annotations"] = index.annotations;
  return CanonicalJson(j);
}

Result<Index> ParseIndex(std::string_view raw, const std::string& what) {
  auto parsed = ParseJson(raw, what);
  if (!parsed.ok()) return parsed.error();
  const Json& j = *parsed;
  if (!j.is_object() || !SchemaVersion2(j)) return Bad(what, "not an image index (schemaVersion 2)");
  if (!j.contains("manifests") || !j["manifests"].is_array()) return Bad(what, "manifests missing");
  Index index;
  // index.json of a layout usually has no mediaType; Docker's manifest list is an index too.
  if (j.contains("mediaType")) {
    if (!j["mediaType"].is_string() || !IsIndexMediaType(j["mediaType"].get<std::string>())) {
      return Bad(what, "not an image index: mediaType " + j["mediaType"].dump());
    }
    index.media_type = j["mediaType"].get<std::string>();
  }
  IMGTOOL_TRY(ArtifactFields(j, what, index.artifact_type, index.subject));
  for (size_t i = 0; i < j["manifests"].size(); ++i) {
    auto d = DescriptorFromJson(j["manifests"][i], what + ": $.manifests[" + std::to_string(i) + "]");
    if (!d.ok()) return d.error();
    index.manifests.push_back(*d);
  }
  if (j.contains("annotations")) {
    auto a = StringMap(j["annotations"], what + ": $.annotations");
    if (!a.ok()) return a.error();
    index.annotations = *a;
  }
  return index;
}

}  // namespace imgtool::oci
