// Where images are written: a layout folder, an oci-archive, a registry repository.
// Backends implement this; transport/write.h walks a Node and feeds it here, so every
// destination gets the same order (blobs, then manifests children first, then the top
// manifest under its tag) and the same checks.
//
// A sink commits a blob only after the bytes it read from the source's stream matched
// the descriptor (size and sha256): a source that lies is refused before anything
// lands at the destination.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "oci/image.h"
#include "oci/manifest.h"
#include "oci/result.h"

namespace imgtool::oci {

struct PutOutcome {
  std::string action;         // exists, mounted, uploaded, resumed, downloaded, written, linked
  uint64_t bytes_sent = 0;    // bytes that crossed the network or were written for it
  uint64_t resumed_from = 0;  // an interrupted upload continued from here
};

class Sink {
 public:
  virtual ~Sink() = default;
  virtual std::string name() const = 0;
  // Stores `blob` unless the destination holds it already. `progress` gets the bytes so
  // far; it may be called from this thread only.
  virtual Result<PutOutcome> PutBlob(const Blob& blob, const std::function<void(uint64_t)>& progress) = 0;
  // Stores a manifest's exact bytes. `tag`: nullopt for a manifest named only by its
  // digest (an index's children), "" for the top manifest untagged, else its tag.
  virtual Status PutManifest(const Descriptor& d, const std::string& bytes, const std::optional<std::string>& tag) = 0;
  // Makes what was written visible where that is a separate step (an archive is written
  // now); a sink that fails here leaves the previous state.
  virtual Status Commit() = 0;
  // After a failure: removes what this sink created from nothing (a new folder).
  virtual void Discard() = 0;
  // An OCI layout folder where a producer (imgtool build) may write blobs before handing
  // them over, so that PutBlob finds them in place and nothing is copied twice: the
  // layout itself, or an archive's working folder. Empty where the sink has none (a
  // registry, a docker-archive): the producer stages in a folder of its own.
  virtual std::string StagingDir() const { return ""; }
};

}  // namespace imgtool::oci
