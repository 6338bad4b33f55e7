// What "pinned by digest" means for each transport, and the reference syntax for it:
//   docker://HOST/REPO@sha256:HEX (a tag beside the digest is ignored by registries; it
//     must not be "latest")
//   oci:DIR@sha256:HEX, oci-archive:FILE@sha256:HEX: the manifest with that digest in the
//     layout's index.json, whatever its tag. A tag (oci:DIR:TAG) is a name that can be
//     moved, so it is not a pin.
#pragma once

#include <string>

#include "oci/result.h"
#include "ref/reference.h"

namespace imgtool::policy {

struct PinnedReference {
  ref::Reference ref;  // what to open: for oci:DIR@D, path DIR and tag D
  std::string digest;  // "sha256:..." when pinned, else empty
};

Result<PinnedReference> ParsePinnedReference(const std::string& text);

}  // namespace imgtool::policy
