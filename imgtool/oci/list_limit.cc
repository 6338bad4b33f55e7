#include "oci/list_limit.h"

#include <set>

namespace imgtool::oci {

Status CheckListLength(size_t count, const std::string& what, const std::string& entries) {
  if (count <= kMaxListEntries) return Status::Ok();
  return MakeError(ErrorKind::kInvalidInput, what + ": " + std::to_string(count) + " " + entries +
                                                 "; imgtool reads at most " + std::to_string(kMaxListEntries) +
                                                 " (a cap on lists from outside)");
}

size_t DistinctDigests(const std::vector<Descriptor>& list) {
  std::set<Digest> seen;
  for (const auto& d : list) seen.insert(d.digest);
  return seen.size();
}

}  // namespace imgtool::oci
