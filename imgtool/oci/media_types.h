// OCI media types (image-spec v1.1) that imgtool writes and accepts.
#pragma once

#include <string_view>

namespace imgtool::oci {

inline constexpr std::string_view kMediaTypeManifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr std::string_view kMediaTypeIndex = "application/vnd.oci.image.index.v1+json";
inline constexpr std::string_view kMediaTypeConfig = "application/vnd.oci.image.config.v1+json";
inline constexpr std::string_view kMediaTypeLayerTar = "application/vnd.oci.image.layer.v1.tar";
inline constexpr std::string_view kMediaTypeLayerGzip = "application/vnd.oci.image.layer.v1.tar+gzip";
inline constexpr std::string_view kMediaTypeLayerZstd = "application/vnd.oci.image.layer.v1.tar+zstd";
// Docker schema 2 equivalents, accepted when reading.
inline constexpr std::string_view kMediaTypeDockerManifest = "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr std::string_view kMediaTypeDockerConfig = "application/vnd.docker.container.image.v1+json";
inline constexpr std::string_view kMediaTypeDockerLayerGzip = "application/vnd.docker.image.rootfs.diff.tar.gzip";
inline constexpr std::string_view kMediaTypeDockerManifestList =
    "application/vnd.docker.distribution.manifest.list.v2+json";
// OCI 1.1: the config of an artifact that has none.
inline constexpr std::string_view kMediaTypeEmpty = "application/vnd.oci.empty.v1+json";

inline constexpr std::string_view kAnnotationRefName = "org.opencontainers.image.ref.name";
inline constexpr std::string_view kAnnotationCreated = "org.opencontainers.image.created";

// Tar layers (gzip, zstd or plain; OCI, Docker, foreign and non-distributable forms):
// the blobs that have diff_ids.
bool IsLayerMediaType(std::string_view media_type);
// Image manifests (images and artifacts alike), OCI or Docker schema 2.
bool IsManifestMediaType(std::string_view media_type);
// Indexes: the OCI image index and Docker's manifest list.
bool IsIndexMediaType(std::string_view media_type);
bool IsConfigMediaType(std::string_view media_type);

}  // namespace imgtool::oci
