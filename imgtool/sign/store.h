// Where signature images live for an image reference: beside the image in its OCI
// layout (oci:DIR:TAG, offline; oci-archive: read-only) or in its registry repository
// (docker://HOST/REPO:TAG). Registry reads and writes go through remote::Copy into and
// out of a temporary layout, so every blob is hashed on the way and manifests travel
// as exact bytes; signature_image.h is the one writer of signature manifests.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fs/atomic_file.h"
#include "ref/reference.h"
#include "oci/digest.h"
#include "oci/result.h"
#include "remote/registry.h"
#include "sign/verify.h"

namespace imgtool::sign {

class SignatureStore {
 public:
  // Resolves the image the reference names (a tag becomes a digest once, here).
  static Result<SignatureStore> Open(const ref::Reference& ref, const remote::RegistryOptions& opts);

  const oci::Digest& image() const { return image_; }
  // What payloads name as docker-reference: HOST/REPO for docker://, as cosign writes;
  // for layouts the folder's name (there is no repository; `--identity` overrides).
  const std::string& identity() const { return identity_; }
  // The folder holding the image's blobs (a temporary pull for docker://).
  const std::string& layout_dir() const { return layout_dir_; }

  // Layers at sha256-<hex><suffix>; empty when there is none.
  Result<std::vector<SignatureLayer>> Read(std::string_view suffix) const;
  // Appends `layer` unless `already_there` says an existing layer makes it redundant.
  // Returns whether it was appended.
  Result<bool> Append(std::string_view suffix, const SignatureLayer& layer,
                      const std::function<bool(const SignatureLayer&)>& already_there) const;

 private:
  ref::Reference ref_;
  remote::RegistryOptions opts_;
  oci::Digest image_;
  std::string identity_;
  std::string layout_dir_;
  std::shared_ptr<fs::TempDir> temp_;  // keeps an extracted archive or pulled manifest
};

}  // namespace imgtool::sign
