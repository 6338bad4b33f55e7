// Reads an OCI image layout (image-spec image-layout.md) as a BlobStore: index.json
// names the manifests, blobs/sha256/<hex> holds every blob. Only regular files inside
// the layout are read (fs/safe_open.h): a blob that is a symlink, a FIFO or a device is
// refused with the reason. Every byte handed out is checked by the oci views on top.
#pragma once

#include <memory>
#include <string>

#include "fs/atomic_file.h"
#include "oci/image.h"
#include "oci/manifest.h"
#include "oci/result.h"

namespace imgtool::layout {

class LayoutStore : public oci::BlobStore {
 public:
  // `name` starts error messages ("oci:out/golden"); `keep` keeps a temporary folder
  // (an extracted archive) alive as long as the store.
  LayoutStore(std::string dir, std::string name, std::shared_ptr<fs::TempDir> keep = nullptr);
  std::string name() const override { return name_; }
  Result<std::unique_ptr<oci::Reader>> OpenBlob(const oci::Descriptor& d) const override;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_, name_;
  std::shared_ptr<fs::TempDir> keep_;
};

Result<oci::Index> ReadIndex(const std::string& dir);

// Finds the manifest for `tag_or_digest` in index.json: a ref name, a "sha256:..."
// digest, or empty when the index holds exactly one manifest (artifacts that refer to an
// image, tagged sha256-<hex>.sig/.att/.sbom, are not counted).
Result<oci::Descriptor> ResolveManifest(const std::string& dir, const std::string& tag_or_digest);

// Reads a blob named by a descriptor, refusing a size or digest mismatch (kIntegrity).
Result<std::string> ReadVerifiedBlob(const std::string& dir, const oci::Descriptor& desc, int64_t max_bytes = 64 << 20);

// "sha256-<64 hex>.sig", ".att", ".sbom": cosign's tags for artifacts about an image;
// "sha256-<64 hex>" alone: the OCI 1.1 referrers tag schema.
bool IsReferrerTag(const std::string& tag);

}  // namespace imgtool::layout
