#include "policy/pinned.h"

#include "oci/digest.h"

namespace imgtool::policy {

Result<PinnedReference> ParsePinnedReference(const std::string& text) {
  PinnedReference out;
  bool local = text.rfind("oci:", 0) == 0 || text.rfind("oci-archive:", 0) == 0;
  auto at = text.rfind("@sha256:");
  if (local && at != std::string::npos) {
    auto d = oci::Digest::Parse(text.substr(at + 1));
    if (!d.ok()) return d.error().Context("image reference '" + text + "'");
    auto ref = layout::ParseReference(text.substr(0, at));
    if (!ref.ok()) return ref.error();
    if (!ref->tag.empty()) {
      return MakeError(ErrorKind::kInvalidInput, "image reference '" + text + "': give a tag or a digest, not both");
    }
    out.ref = *ref;
    out.ref.tag = d->str();  // ResolveManifest accepts a digest where a tag goes
    out.digest = d->str();
    return out;
  }
  auto ref = layout::ParseReference(text);
  if (!ref.ok()) return ref.error();
  out.ref = *ref;
  out.digest = ref->digest;
  return out;
}

}  // namespace imgtool::policy
