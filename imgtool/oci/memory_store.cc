#include "oci/memory_store.h"

namespace imgtool::oci {

Result<std::unique_ptr<Reader>> MemoryStore::OpenBlob(const Descriptor& d) const {
  auto it = blobs_.find(d.digest);
  if (it == blobs_.end()) return MakeError(ErrorKind::kNotFound, name_ + ": blob " + d.digest.str() + ": missing");
  return std::unique_ptr<Reader>(std::make_unique<StringReader>(it->second));
}

Descriptor MemoryStore::Add(std::string bytes, std::string_view media_type) {
  Descriptor d;
  d.media_type = std::string(media_type);
  d.digest = Digest::Of(bytes);
  d.size = static_cast<int64_t>(bytes.size());
  blobs_[d.digest] = std::move(bytes);
  return d;
}

Result<Node> AddManifest(const std::shared_ptr<MemoryStore>& store, const Manifest& m) {
  auto bytes = SerializeManifest(m);
  if (!bytes.ok()) return bytes.error();
  Descriptor d = store->Add(*bytes, m.media_type);
  return OpenNode(store, d);
}

Result<Node> AddIndex(const std::shared_ptr<MemoryStore>& store, const Index& index) {
  auto bytes = SerializeIndex(index);
  if (!bytes.ok()) return bytes.error();
  Descriptor d = store->Add(*bytes, index.media_type);
  return OpenNode(store, d);
}

}  // namespace imgtool::oci
