#include "oci/media_types.h"

namespace imgtool::oci {

bool IsLayerMediaType(std::string_view m) {
  return m == kMediaTypeLayerTar || m == kMediaTypeLayerGzip || m == kMediaTypeLayerZstd ||
         m == kMediaTypeDockerLayerGzip || m == "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip" ||
         m == "application/vnd.oci.image.layer.nondistributable.v1.tar" ||
         m == "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip" ||
         m == "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd";
}

bool IsIndexMediaType(std::string_view m) { return m == kMediaTypeIndex || m == kMediaTypeDockerManifestList; }

bool IsManifestMediaType(std::string_view m) { return m == kMediaTypeManifest || m == kMediaTypeDockerManifest; }

bool IsConfigMediaType(std::string_view m) { return m == kMediaTypeConfig || m == kMediaTypeDockerConfig; }

}  // namespace imgtool::oci
