// Where signature images live for an image reference: in the repository the image is
// in (a layout, offline; an oci-archive; a registry repository), at the tag
// sha256-<hex>.sig (.att for attestations). Read through transport::Open and written
// through transport::OpenSink, so no transport is special here.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "oci/digest.h"
#include "oci/repository.h"
#include "oci/result.h"
#include "ref/reference.h"
#include "sign_core/verify.h"
#include "transport/open.h"

namespace imgtool::sign {

class SignatureStore {
 public:
  // Resolves what the reference names (a tag becomes a digest once, here): an image, an
  // artifact or an index (cosign signs an index by its own digest).
  static Result<SignatureStore> Open(const ref::Reference& ref, const transport::SinkOptions& opts);
  // Another manifest of the same repository, for --recursive: an entry of this store's
  // index is opened through the index (a layout tags only its top manifests, so it could
  // not be found by digest), anything else by digest.
  Result<SignatureStore> For(const oci::Digest& digest) const;

  const oci::Digest& image() const { return image_; }
  const oci::Node& node() const { return node_; }
  // What payloads name as docker-reference: HOST/REPO for docker://, as cosign writes;
  // for layouts the folder's name (there is no repository; `--identity` overrides).
  std::string identity() const { return repo_->identity(); }

  // Layers at sha256-<hex><suffix>; empty when there is none.
  Result<std::vector<SignatureLayer>> Read(std::string_view suffix) const;
  // The referrers of the image with `artifact_type` whose one layer is of that media type
  // (a Sigstore bundle stored as an OCI 1.1 artifact): that layer's bytes, checked against
  // its digest; others of another shape are skipped. The list is filtered by type before
  // anything is fetched, and refused (kInvalidInput naming the count) when more than
  // oci::kMaxListEntries remain: a manifest and a blob are fetched per referrer.
  Result<std::vector<SignatureLayer>> ReadReferrers(std::string_view artifact_type) const;
  // Appends `layer` unless `already_there` says an existing layer makes it redundant.
  // Returns whether it was appended.
  Result<bool> Append(std::string_view suffix, const SignatureLayer& layer,
                      const std::function<bool(const SignatureLayer&)>& already_there) const;

 private:
  ref::Reference ref_;
  transport::SinkOptions opts_;
  std::shared_ptr<const oci::Repository> repo_;
  oci::Node node_;
  oci::Digest image_;
};

}  // namespace imgtool::sign
