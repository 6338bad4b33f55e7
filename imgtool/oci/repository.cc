#include "oci/repository.h"

#include <set>

#include "oci/list_limit.h"

namespace imgtool::oci {

std::string ReferrersTag(const Digest& subject) { return "sha256-" + subject.hex(); }

Result<std::vector<Descriptor>> ReferrersOfType(const Index& index, const std::string& artifact_type,
                                                const std::string& what) {
  std::vector<Descriptor> out;
  std::set<Digest> seen;
  for (const Descriptor& d : index.manifests) {
    if (!artifact_type.empty() && d.artifact_type != artifact_type) continue;
    if (seen.insert(d.digest).second) out.push_back(d);
  }
  std::string entries = "referrers" + (artifact_type.empty() ? "" : " of type " + artifact_type);
  IMGTOOL_TRY(CheckListLength(out.size(), what, entries));
  return out;
}

Result<std::vector<Descriptor>> Repository::Referrers(const Digest& subject, const std::string& artifact_type) const {
  const std::string tag = ReferrersTag(subject);
  auto node = Open(tag);
  if (!node.ok()) {
    if (node.error().kind == ErrorKind::kNotFound) return std::vector<Descriptor>();
    return node.error().Context("reading referrers at " + tag);
  }
  if (!node->is_index()) {
    return MakeError(ErrorKind::kInvalidInput, name() + ": " + tag + " is not an index (the referrers tag schema)");
  }
  return ReferrersOfType(node->index->index(), artifact_type, name() + ": " + tag);
}

}  // namespace imgtool::oci
