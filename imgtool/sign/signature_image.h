// Signature images, stored as cosign stores them: an image manifest at tag
// sha256-<hex>.sig (.att for attestations) whose layers are the payloads, each with its
// signature in an annotation; the config is an image config naming the layers as
// diff_ids (go-containerregistry's empty image plus layers). Built in memory and read
// from any repository, so layouts, archives and registries get the same bytes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "oci/digest.h"
#include "oci/image.h"
#include "oci/result.h"
#include "sign_core/verify.h"

namespace imgtool::sign {

inline constexpr std::string_view kSignatureSuffix = ".sig";
inline constexpr std::string_view kAttestationSuffix = ".att";

// "sha256-<hex>.sig" for the image `image`.
std::string ArtifactTag(const oci::Digest& image, std::string_view suffix);

// The layers a signature manifest names, as cosign reads them (its config is not
// consulted). Payloads are read as they are (a size cap, no digest check here: verify.h
// reports a payload that does not match its descriptor, per layer). Each digest is read
// once however many layers name it, and the layers' sizes together are capped before any
// is read (16 MiB: every layer's payload is held and verified on its own).
Result<std::vector<SignatureLayer>> SignatureLayers(const oci::BlobStore& store, const oci::Manifest& manifest);

// An image holding exactly `layers`, in memory, ready to be written anywhere.
Result<oci::Node> SignatureImage(const std::vector<SignatureLayer>& layers);

}  // namespace imgtool::sign
