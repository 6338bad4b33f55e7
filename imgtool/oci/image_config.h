// The image config (OCI image-spec config.md), kept as JSON so fields we do not model
// (ExposedPorts, StopSignal, ...) survive a rebuild on top of a base image. These helpers
// read and set the fields imgtool cares about.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "oci/canonical_json.h"
#include "oci/digest.h"
#include "oci/manifest.h"
#include "oci/result.h"

namespace imgtool::oci {

struct HistoryEntry {
  std::string created;     // RFC 3339 from SOURCE_DATE_EPOCH
  std::string created_by;  // "imgtool build: layer cuda"
  bool empty_layer = false;
};

// "1970-01-01T00:00:00Z" for 0. Always UTC, whatever TZ says.
std::string Rfc3339(int64_t epoch_seconds);

Json NewImageConfig(const std::string& os, const std::string& architecture);

// How a manifest's config reads: one rule for opening an image (oci/image.h) and for
// verify. An image config is named by an image config media type (OCI or Docker) and is
// a JSON object with "rootfs". `{}` under that media type, as BuildKit's attestation
// manifests and some artifacts have it, is not one: its manifest is an artifact, as one
// whose config has any other media type is (those bytes are not parsed at all).
struct ConfigReading {
  bool image_config = false;
  Json config = Json::object();  // the image config; an empty object when not one
  std::vector<Digest> diff_ids;  // in rootfs order
};
// kInvalidInput naming `what` for bytes under an image config media type that are not a
// JSON object, or whose "rootfs" has no well-formed diff_ids.
Result<ConfigReading> ReadConfig(std::string_view media_type, std::string_view raw, const std::string& what);

// diff_ids in rootfs order; an error when missing or malformed.
Result<std::vector<Digest>> ConfigDiffIds(const Json& config);
void AppendLayerToConfig(Json& config, const Digest& diff_id, const HistoryEntry& history);

// A top-level string field ("os", "created"); "" when absent or not a string.
std::string ConfigField(const Json& config, const std::string& key);
Platform ConfigPlatform(const Json& config);

// config.config.* accessors (Docker's "container config" naming).
std::string ConfigUser(const Json& config);
std::vector<std::string> ConfigStringList(const Json& config, const std::string& field);  // Env, Entrypoint, Cmd
std::map<std::string, std::string> ConfigLabels(const Json& config);

}  // namespace imgtool::oci
