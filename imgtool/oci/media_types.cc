#include "oci/media_types.h"

namespace imgtool::oci {

bool IsLayerMediaType(std::string_view m) {
  return m == kMediaTypeLayerTar || m == kMediaTypeLayerGzip || m == kMediaTypeLayerZstd ||
         m == kMediaTypeDockerLayerGzip;
}

bool IsManifestMediaType(std::string_view m) { return m == kMediaTypeManifest || m == kMediaTypeDockerManifest; }

bool IsConfigMediaType(std::string_view m) { return m == kMediaTypeConfig || m == kMediaTypeDockerConfig; }

}  // namespace imgtool::oci
