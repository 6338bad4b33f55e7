// Descriptors, image manifests and indexes (OCI image-spec v1.1), parsed strictly and
// serialized canonically. Parsing keeps enough to navigate; the raw bytes stay the truth.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oci/canonical_json.h"
#include "oci/digest.h"
#include "oci/result.h"

namespace imgtool::oci {

struct Platform {
  std::string os;
  std::string architecture;
  std::string variant;
  friend bool operator==(const Platform&, const Platform&) = default;
};

// "linux/arm64/v8" <-> Platform (skopeo's and crane's --platform spelling).
Result<Platform> ParsePlatform(const std::string& text);
std::string PlatformString(const Platform& p);
// Whether an index entry for `have` serves a request for `want`: os and architecture
// equal; a variant only when asked for (arm64's "v8" is its default, as containerd has it).
bool PlatformMatches(const Platform& want, const Platform& have);

struct Descriptor {
  std::string media_type;
  Digest digest;
  int64_t size = 0;
  std::map<std::string, std::string> annotations;
  std::optional<Platform> platform;
  std::string artifact_type = {};  // OCI 1.1, in index entries and referrers
};

struct Manifest {
  std::string media_type = "application/vnd.oci.image.manifest.v1+json";
  std::string artifact_type;  // OCI 1.1 artifacts
  Descriptor config;
  std::vector<Descriptor> layers;
  std::optional<Descriptor> subject;  // the manifest this one is about (an SBOM's image)
  std::map<std::string, std::string> annotations;
};

struct Index {
  std::string media_type = "application/vnd.oci.image.index.v1+json";
  std::string artifact_type;
  std::vector<Descriptor> manifests;
  std::optional<Descriptor> subject;
  std::map<std::string, std::string> annotations;
};

Json DescriptorToJson(const Descriptor& d);
// `where` is a JSON path for errors: "index.json: $.manifests[2]".
Result<Descriptor> DescriptorFromJson(const Json& j, const std::string& where);

Result<std::string> SerializeManifest(const Manifest& m);
Result<Manifest> ParseManifest(std::string_view raw, const std::string& what);

Result<std::string> SerializeIndex(const Index& index);
Result<Index> ParseIndex(std::string_view raw, const std::string& what);

}  // namespace imgtool::oci
