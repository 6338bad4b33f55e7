#include "oci/image_config.h"

#include <ctime>

#include "oci/media_types.h"

namespace imgtool::oci {

std::string Rfc3339(int64_t epoch_seconds) {
  time_t t = static_cast<time_t>(epoch_seconds);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Json NewImageConfig(const std::string& os, const std::string& architecture) {
  return Json{{"architecture", architecture},
              {"os", os},
              {"config", Json::object()},
              {"rootfs", {{"type", "layers"}, {"diff_ids", Json::array()}}},
              {"history", Json::array()}};
}

Result<ConfigReading> ReadConfig(std::string_view media_type, std::string_view raw, const std::string& what) {
  ConfigReading out;
  if (!IsConfigMediaType(media_type)) return out;
  auto j = ParseJson(raw, what);
  if (!j.ok()) return j.error();
  if (!j->is_object()) return MakeError(ErrorKind::kInvalidInput, what + ": want a JSON object");
  if (!j->contains("rootfs")) return out;
  auto ids = ConfigDiffIds(*j);
  if (!ids.ok()) return ids.error().Context(what);
  out.image_config = true;
  out.config = std::move(*j);
  out.diff_ids = std::move(*ids);
  return out;
}

Result<std::vector<Digest>> ConfigDiffIds(const Json& config) {
  if (!config.contains("rootfs") || !config["rootfs"].is_object() || !config["rootfs"].contains("diff_ids") ||
      !config["rootfs"]["diff_ids"].is_array()) {
    return MakeError(ErrorKind::kInvalidInput, "$.rootfs.diff_ids missing");
  }
  std::vector<Digest> out;
  for (const auto& d : config["rootfs"]["diff_ids"]) {
    if (!d.is_string()) return MakeError(ErrorKind::kInvalidInput, "$.rootfs.diff_ids: want strings");
    auto parsed = Digest::Parse(d.get<std::string>());
    if (!parsed.ok()) return parsed.error().Context("$.rootfs.diff_ids");
    out.push_back(*parsed);
  }
  return out;
}

void AppendLayerToConfig(Json& config, const Digest& diff_id, const HistoryEntry& history) {
  config["rootfs"]["diff_ids"].push_back(diff_id.str());
  Json h = {{"created", history.created}, {"created_by", history.created_by}};
  if (history.empty_layer) h["empty_layer"] = true;
  if (!config.contains("history")) config["history"] = Json::array();
  config["history"].push_back(h);
}

std::string ConfigField(const Json& config, const std::string& key) {
  if (!config.is_object() || !config.contains(key) || !config[key].is_string()) return "";
  return config[key].get<std::string>();
}

Platform ConfigPlatform(const Json& config) {
  return Platform{ConfigField(config, "os"), ConfigField(config, "architecture"), ConfigField(config, "variant")};
}

std::string ConfigUser(const Json& config) {
  if (!config.contains("config") || !config["config"].is_object()) return "";
  return ConfigField(config["config"], "User");
}

std::vector<std::string> ConfigStringList(const Json& config, const std::string& field) {
  std::vector<std::string> out;
  if (!config.contains("config") || !config["config"].is_object()) return out;
  const Json& c = config["config"];
  if (!c.contains(field) || !c[field].is_array()) return out;
  for (const auto& s : c[field]) {
    if (s.is_string()) out.push_back(s.get<std::string>());
  }
  return out;
}

std::map<std::string, std::string> ConfigLabels(const Json& config) {
  std::map<std::string, std::string> out;
  if (!config.contains("config") || !config["config"].is_object()) return out;
  const Json& c = config["config"];
  if (!c.contains("Labels") || !c["Labels"].is_object()) return out;
  for (const auto& [k, v] : c["Labels"].items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

}  // namespace imgtool::oci
