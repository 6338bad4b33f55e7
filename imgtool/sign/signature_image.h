// Signature images in an OCI layout, stored as cosign stores them: an image manifest
// at tag sha256-<hex>.sig (.att for attestations) whose layers are the payloads, each
// with its signature in an annotation; the config is an image config naming the layers
// as diff_ids (go-containerregistry's empty image plus layers). Registries get the
// same bytes: store.h copies this layout's manifest there.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "oci/digest.h"
#include "oci/result.h"
#include "sign/verify.h"

namespace imgtool::sign {

inline constexpr std::string_view kSignatureSuffix = ".sig";
inline constexpr std::string_view kAttestationSuffix = ".att";

// "sha256-<hex>.sig" for the image `image`.
std::string ArtifactTag(const oci::Digest& image, std::string_view suffix);

// The layers of the signature image at `tag`; none when the tag does not exist. Blobs
// are read as they are (a size cap, no digest check: verify.h reports a mismatch).
Result<std::vector<SignatureLayer>> ReadSignatureImage(const std::string& dir, const std::string& tag);

// Writes an image holding exactly `layers` and points `tag` at it.
Result<oci::Digest> WriteSignatureImage(const std::string& dir, const std::string& tag,
                                        const std::vector<SignatureLayer>& layers);

}  // namespace imgtool::sign
