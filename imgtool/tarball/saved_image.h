// One image of a `docker save` tarball as a registry would serve it. The tarball holds no
// manifest, so one is made up the way skopeo (containers/image docker/internal/tarfile)
// makes it, byte for byte, and the image's digest is that manifest's sha256: `imgtool
// digest docker-archive:F` is `skopeo inspect --raw docker-archive:F | sha256sum`, and
// equals skopeo's `Digest`. The made-up manifest is a Docker schema 2 manifest whose
// config is the config member's exact bytes and whose layers are named by their diff_ids:
// each layer blob is served uncompressed (a compressed member inflated as it streams),
// and its descriptor says application/vnd.docker.image.rootfs.diff.tar.gzip whatever the
// member holds (containers/image's choice, kept for the digest's sake), with the
// uncompressed size. So the digest depends on the config and the layers' uncompressed
// content only, not on how the tarball stored them.
//
// Every layer is checked against its diff_id: a compressed member is inflated here once
// (its size is needed for the manifest) and its sha256 compared; an uncompressed one,
// whose sha256 IS its diff_id, is checked by every reader of the blob (oci::Blob::Open),
// so inspecting never reads a layer.
#pragma once

#include <string>
#include <vector>

#include "archive/layer.h"
#include "oci/manifest.h"
#include "oci/result.h"
#include "tarball/saved_archive.h"

namespace imgtool::tarball {

struct SavedLayer {
  oci::Digest diff_id;  // the blob's digest in the made-up manifest
  uint64_t size = 0;    // uncompressed
  TarMember member;
  archive::Compression compression = archive::Compression::kNone;
};

struct SynthesizedImage {
  oci::Descriptor descriptor;  // of `manifest`
  std::string manifest;
  std::string config;
  oci::Digest config_digest;
  std::vector<SavedLayer> layers;  // each diff_id once
};

// The image at `index` of the archive's manifest.json.
Result<SynthesizedImage> SynthesizeImage(const std::shared_ptr<const SavedArchive>& archive, size_t index);

// skopeo's manifest for a config and layers (diff_id, uncompressed size), as Go's
// encoding/json writes containers/image's manifest.Schema2: not canonical JSON (the keys
// are in the struct's order), because the digest must be skopeo's.
std::string SchemaTwoManifest(const oci::Digest& config, uint64_t config_size,
                              const std::vector<std::pair<oci::Digest, uint64_t>>& layers);

}  // namespace imgtool::tarball
