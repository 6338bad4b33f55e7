// A BlobStore in memory: for documents imgtool composes before writing them anywhere
// (signature images, indexes assembled by `imgtool index`), and for tests. Blobs are
// kept by digest; Add returns the descriptor to put in a manifest.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "oci/image.h"

namespace imgtool::oci {

class MemoryStore : public BlobStore {
 public:
  explicit MemoryStore(std::string name = "memory") : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  Result<std::unique_ptr<Reader>> OpenBlob(const Descriptor& d) const override;
  Descriptor Add(std::string bytes, std::string_view media_type);

 private:
  std::string name_;
  std::map<Digest, std::string> blobs_;
};

// Serializes `m` canonically into `store` and opens it: an image built in memory.
Result<Node> AddManifest(const std::shared_ptr<MemoryStore>& store, const Manifest& m);
Result<Node> AddIndex(const std::shared_ptr<MemoryStore>& store, const Index& index);

}  // namespace imgtool::oci
