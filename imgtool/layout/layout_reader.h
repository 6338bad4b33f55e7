// Reads an OCI image layout. Small blobs (manifest, config) are checked against their
// descriptor's digest and size when read; layers are handed out by path for streaming.
#pragma once

#include <memory>
#include <string>

#include "oci/image.h"
#include "oci/manifest.h"
#include "oci/result.h"

namespace imgtool::layout {

Result<oci::Index> ReadIndex(const std::string& dir);

// Finds the manifest for `tag_or_digest` in index.json: a ref name, a "sha256:..."
// digest, or empty when the index holds exactly one manifest.
Result<oci::Descriptor> ResolveManifest(const std::string& dir, const std::string& tag_or_digest);

// Reads a blob named by a descriptor, refusing a size or digest mismatch (kIntegrity).
Result<std::string> ReadVerifiedBlob(const std::string& dir, const oci::Descriptor& desc,
                                     int64_t max_bytes = 64 << 20);

std::string BlobPathIn(const std::string& dir, const oci::Digest& d);

Result<std::shared_ptr<const oci::Image>> OpenLayoutImage(const std::string& dir, const std::string& tag_or_digest);

}  // namespace imgtool::layout
