// What one verify learned about the bytes a store holds under one digest, so that each
// blob is read once per command whatever number of descriptors name it: an index whose
// 20,000 entries named one image read it 20,000 times (4.2 GB hashed for a 20 MB image).
// A read is about the stored bytes; every descriptor is still judged against its own
// claim (size, and the diff_id its config names), so a descriptor naming a known digest
// with another size is a problem found without reading again, and every entry that names
// a damaged blob is named.
//
// Not here: reading (check/verify.cc decides what to read, how far, and on how many
// threads); this is the record and the pure judgement over it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "oci/digest.h"
#include "oci/manifest.h"

namespace imgtool::check {

struct StoredBlob {
  std::string error;        // opening or reading failed ("missing", or why): nothing else is known
  int64_t error_claim = 0;  // the size the failing read was made for
  bool complete = false;    // read to its end: `size` and `sha256` are of every stored byte
  uint64_t size = 0;
  oci::Digest sha256;
  std::optional<uint64_t> longer_than;  // not complete: the read was cut here, more bytes followed
  // A tar layer's uncompressed digest: derived by inflating these bytes, or from this
  // user's record for the digest (valid only when the bytes hash to it).
  std::optional<oci::Digest> diff_id;
  bool diff_id_recorded = false;
  std::string inflate_error;  // inflating failed (a corrupt stream); the raw read may not have ended
};

// What a descriptor asks of the bytes under its digest.
struct Claim {
  const oci::Descriptor* descriptor = nullptr;
  const oci::Digest* diff_id = nullptr;  // a tar layer's diff_id from its config; null otherwise
};

// How another read must be made so that `known` answers `claim`; nullopt when it already
// does. `limit`: the bytes after which the read stops (a source that never ends is cut);
// `inflate`: the diff_id is wanted and not known.
struct ReadPlan {
  uint64_t limit = 0;
  bool inflate = false;
};
std::optional<ReadPlan> PlanRead(const StoredBlob* known, const Claim& claim);

// Folds a new read into what was known.
void Merge(StoredBlob& known, const StoredBlob& read);

// The problems with `claim` given what is stored (empty: none); "name: why" is left to the
// caller, these are the why.
std::vector<std::string> Judge(const StoredBlob& known, const Claim& claim);

}  // namespace imgtool::check
