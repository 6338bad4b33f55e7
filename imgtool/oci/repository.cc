#include "oci/repository.h"

namespace imgtool::oci {

// A referrers index can list many artifacts; more than this is refused, not walked.
constexpr size_t kMaxReferrers = 1000;

std::string ReferrersTag(const Digest& subject) { return "sha256-" + subject.hex(); }

std::vector<Descriptor> ReferrersOfType(const Index& index, const std::string& artifact_type) {
  std::vector<Descriptor> out;
  for (const Descriptor& d : index.manifests) {
    if (artifact_type.empty() || d.artifact_type == artifact_type) out.push_back(d);
  }
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
  if (node->index->children().size() > kMaxReferrers) {
    return MakeError(ErrorKind::kInvalidInput, name() + ": " + tag + " lists more than " +
                                                   std::to_string(kMaxReferrers) + " referrers");
  }
  return ReferrersOfType(node->index->index(), artifact_type);
}

}  // namespace imgtool::oci
