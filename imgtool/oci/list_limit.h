// The one cap on lists from outside that imgtool walks entry by entry, where each entry
// costs a read or a request: the manifests an index names, the layers of a manifest, the
// referrers of an image, the pages of a tags list. A registry, a layout or a signer
// chooses their length; without a cap a 4 KiB answer listing 4,000 referrers made 4,002
// requests. Every such walk checks its list here before it reads the first entry, and
// over the cap is an error that says which list was capped (never a silent cut: a walk
// that stops early could miss the entry that decides).
//
// What a list costs is its distinct entries where the walk reads each digest once (an
// index whose 20,000 entries name one image costs one image; see check/verify.cc and
// transport/write.cc), and all its entries where each is applied in turn (layers).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "oci/manifest.h"
#include "oci/result.h"

namespace imgtool::oci {

inline constexpr size_t kMaxListEntries = 1000;

// kInvalidInput "WHAT: COUNT ENTRIES; imgtool reads at most 1000 (a cap on lists from
// outside)" when `count` is over the cap.
Status CheckListLength(size_t count, const std::string& what, const std::string& entries);

// How many distinct digests `list` names.
size_t DistinctDigests(const std::vector<Descriptor>& list);

}  // namespace imgtool::oci
