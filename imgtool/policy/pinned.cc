#include "policy/pinned.h"

#include "oci/digest.h"

namespace imgtool::policy {

Result<PinnedReference> ParsePinnedReference(const std::string& text) {
  auto ref = ref::ParseReference(text);  // oci:DIR@sha256:.. carries the digest in tag and digest
  if (!ref.ok()) return ref.error();
  PinnedReference out;
  out.ref = *ref;
  out.digest = ref->digest;
  return out;
}

}  // namespace imgtool::policy
