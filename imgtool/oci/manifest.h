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

struct Descriptor {
  std::string media_type;
  Digest digest;
  int64_t size = 0;
  std::map<std::string, std::string> annotations;
  std::optional<Platform> platform;
};

struct Manifest {
  std::string media_type = "application/vnd.oci.image.manifest.v1+json";
  Descriptor config;
  std::vector<Descriptor> layers;
  std::map<std::string, std::string> annotations;
};

struct Index {
  std::vector<Descriptor> manifests;
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
