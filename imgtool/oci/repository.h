// Where a reference points into: a registry repository, or a layout (an oci-archive is
// one, extracted), seen the same way. It holds many manifests by tag and by digest, and
// that is where cosign keeps what it knows about an image: sibling tags
// sha256-<hex>.sig, .att and .sbom. Backends implement this beside their BlobStore.
#pragma once

#include <string>
#include <vector>

#include "oci/image.h"
#include "oci/result.h"

namespace imgtool::oci {

class Repository {
 public:
  virtual ~Repository() = default;
  // "oci:out/golden", "docker://HOST/REPO": the start of error messages.
  virtual std::string name() const = 0;
  // What a signature payload names as docker-reference: HOST/REPO, as cosign writes it;
  // a layout's folder name (a layout has no repository).
  virtual std::string identity() const = 0;
  // The descriptor `tag_or_digest` names, without reading the manifest when the backend
  // can avoid it (a registry answers HEAD); kNotFound when nothing has that name.
  virtual Result<Descriptor> Resolve(const std::string& tag_or_digest) const = 0;
  // What `tag_or_digest` names, opened (its manifest read and checked); kNotFound when
  // nothing has that name.
  virtual Result<Node> Open(const std::string& tag_or_digest) const = 0;
  // The blobs of every manifest here.
  virtual std::shared_ptr<const BlobStore> store() const = 0;
  // Every tag, sorted.
  virtual Result<std::vector<std::string>> Tags() const = 0;
  // The manifests about `subject` (OCI 1.1 referrers), only those of `artifact_type` when
  // it is not empty, each once and at most oci::kMaxListEntries (more is kInvalidInput);
  // none is an empty list. The default reads the referrers tag schema (an
  // index at tag sha256-<hex>), which layouts and registries without the referrers API
  // use; a registry backend asks the API first.
  virtual Result<std::vector<Descriptor>> Referrers(const Digest& subject, const std::string& artifact_type) const;
};

// The referrers in an index (the API's answer or the tag schema's) of `artifact_type` (any
// when empty), each digest once: filtered before anything is fetched, then capped
// (oci/list_limit.h: kInvalidInput naming `what` and the count when over).
Result<std::vector<Descriptor>> ReferrersOfType(const Index& index, const std::string& artifact_type,
                                                const std::string& what);
// The tag the referrers tag schema uses for `subject`: "sha256-<hex>".
std::string ReferrersTag(const Digest& subject);

}  // namespace imgtool::oci
