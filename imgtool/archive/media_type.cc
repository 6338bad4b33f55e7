// Layer media types and compression names: the mapping between what a manifest says
// and how layer bytes are compressed.
#include <string>

#include "archive/layer.h"

namespace imgtool::archive {

namespace {
constexpr const char* kOciTar = "application/vnd.oci.image.layer.v1.tar";
constexpr const char* kOciGzip = "application/vnd.oci.image.layer.v1.tar+gzip";
constexpr const char* kOciZstd = "application/vnd.oci.image.layer.v1.tar+zstd";
// Read-only aliases: Docker schema 2 layers and the deprecated OCI non-distributable
// variants carry the same bytes as their OCI counterparts.
constexpr const char* kDockerGzip = "application/vnd.docker.image.rootfs.diff.tar.gzip";
constexpr const char* kDockerForeignGzip = "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip";
constexpr const char* kNondistTar = "application/vnd.oci.image.layer.nondistributable.v1.tar";
constexpr const char* kNondistGzip = "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip";
constexpr const char* kNondistZstd = "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd";
}  // namespace

std::string LayerMediaType(Compression c) {
  switch (c) {
    case Compression::kGzip:
      return kOciGzip;
    case Compression::kZstd:
      return kOciZstd;
    case Compression::kNone:
      return kOciTar;
  }
  return kOciTar;
}

Result<Compression> CompressionFromName(const std::string& name) {
  if (name == "gzip") return Compression::kGzip;
  if (name == "zstd") return Compression::kZstd;
  if (name == "none") return Compression::kNone;
  return MakeError(ErrorKind::kInvalidInput, "unknown compression \"" + name + "\" (want gzip, zstd or none)");
}

Result<Compression> CompressionFromMediaType(const std::string& media_type) {
  if (media_type == kOciGzip || media_type == kDockerGzip || media_type == kDockerForeignGzip ||
      media_type == kNondistGzip) {
    return Compression::kGzip;
  }
  if (media_type == kOciZstd || media_type == kNondistZstd) return Compression::kZstd;
  if (media_type == kOciTar || media_type == kNondistTar) return Compression::kNone;
  return MakeError(ErrorKind::kInvalidInput, "unsupported layer media type \"" + media_type + "\"");
}

}  // namespace imgtool::archive
