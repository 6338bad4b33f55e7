#include "builder/package_layer.h"

#include "oci/canonical_json.h"

namespace imgtool::build {

using oci::Json;

bool IsPackageOnlyLayer(const LayerSpec& layer) {
  if (!layer.files.empty() || layer.packages.empty()) return false;
  for (const auto& p : layer.packages) {
    if (p.kind == PackageKind::kInstalledWheel) return false;
  }
  return true;
}

std::string PackageLayerFingerprint(const LayerSpec& layer) {
  std::string fp = "package layer " + layer.name + "\n";
  for (const auto& p : layer.packages) {
    fp += std::string(PackageKindName(p.kind)) + "\t" + p.sha256.str() + "\t" + p.name + "\t" + p.version + "\t" +
          p.prefix + "\t" + (p.allow_setuid ? "setuid" : "-") + "\n";
  }
  return fp;
}

std::string PackageRecordsJson(const std::vector<PackageRecord>& records, const std::vector<std::string>& notes) {
  Json list = Json::array();
  for (const auto& r : records) {
    Json libs = Json::array();
    for (const auto& l : r.libraries) libs.push_back({{"path", l.path}, {"sha256", l.sha256.str()}});
    list.push_back({{"kind", PackageKindName(r.kind)},
                    {"name", r.name},
                    {"version", r.version},
                    {"sha256", r.sha256.str()},
                    {"size", r.size},
                    {"status", r.status_stanza},
                    {"libraries", libs}});
  }
  auto bytes = oci::CanonicalJson(Json{{"packages", list}, {"notes", notes}});
  return bytes.ok() ? *bytes : "";
}

std::optional<CachedPackages> ParsePackageRecords(const std::string& json, const LayerSpec& layer) {
  auto doc = oci::ParseJson(json, "package layer cache entry");
  if (!doc.ok() || !doc->is_object()) return std::nullopt;
  try {
    const Json& list = doc->at("packages");
    if (!list.is_array() || list.size() != layer.packages.size()) return std::nullopt;
    CachedPackages out;
    for (size_t i = 0; i < list.size(); ++i) {
      const PackageSpec& spec = layer.packages[i];
      const Json& j = list[i];
      PackageRecord r;
      r.kind = spec.kind;
      r.name = j.at("name").get<std::string>();
      r.version = j.at("version").get<std::string>();
      auto sha = oci::Digest::Parse(j.at("sha256").get<std::string>());
      if (!sha.ok() || *sha != spec.sha256 || j.at("kind").get<std::string>() != PackageKindName(spec.kind)) {
        return std::nullopt;
      }
      r.sha256 = *sha;
      r.size = j.at("size").get<uint64_t>();
      r.status_stanza = j.at("status").get<std::string>();
      for (const auto& l : j.at("libraries")) {
        auto d = oci::Digest::Parse(l.at("sha256").get<std::string>());
        if (!d.ok()) return std::nullopt;
        r.libraries.push_back({l.at("path").get<std::string>(), *d});
      }
      r.source = spec.given;
      r.where = spec.where;
      out.records.push_back(std::move(r));
    }
    for (const auto& n : doc->at("notes")) out.notes.push_back(n.get<std::string>());
    return out;
  } catch (const Json::exception&) {
    return std::nullopt;
  }
}

Status CheckPackagePins(const LayerSpec& layer) {
  for (const auto& p : layer.packages) {
    if (p.fetched) continue;  // hashed to its pin by fetch, just now
    auto checked = CheckPackageFile(p);
    if (!checked.ok()) return checked.error();
  }
  return Status::Ok();
}

}  // namespace imgtool::build
