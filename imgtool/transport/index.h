// Assembling an index from images (crane's `index append`, `imgtool index create|append`):
// each image is written into the destination's repository by digest, with its
// signatures and other sibling artifacts, then an index naming each with its platform
// (from its config) is written under the destination's tag, last.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ref/reference.h"
#include "transport/copy.h"

namespace imgtool::transport {

struct IndexOptions {
  CopyOptions copy;
  std::optional<ref::Reference> base;  // append to this index's entries (its children are copied too)
  std::map<std::string, std::string> annotations;
};

struct IndexReport : CopyReport {
  std::vector<oci::Descriptor> entries;  // the index's manifests, in order
};

// Two entries for one platform are refused (a client could not choose between them).
Result<IndexReport> AssembleIndex(const std::vector<ref::Reference>& images, const ref::Reference& dst,
                                  const IndexOptions& opts);

}  // namespace imgtool::transport
