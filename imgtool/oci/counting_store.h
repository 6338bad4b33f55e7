// A BlobStore that passes another through and counts what was read from it: how many
// manifests and blobs were opened, and how many bytes came out. `imgtool verify` reports
// these (`--json` "stats"), so a user and a test can see that each unique blob was read
// once whatever number of descriptors named it, without timing anything.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "oci/image.h"

namespace imgtool::oci {

struct ReadCounts {
  uint64_t reads = 0;  // ReadManifest and OpenBlob calls, failed ones too
  uint64_t bytes = 0;  // bytes they handed out (a manifest's whole, a blob's as far as it was read)
};

class CountingStore : public BlobStore {
 public:
  // `inner` must outlive this store and every reader it hands out.
  explicit CountingStore(const BlobStore& inner);
  std::string name() const override { return inner_.name(); }
  Result<std::unique_ptr<Reader>> OpenBlob(const Descriptor& d) const override;
  Result<std::string> ReadManifest(const Descriptor& d) const override;
  ReadCounts counts() const;

 private:
  struct Counters {
    std::atomic<uint64_t> reads{0}, bytes{0};
  };
  const BlobStore& inner_;
  std::shared_ptr<Counters> counters_ = std::make_shared<Counters>();
};

}  // namespace imgtool::oci
