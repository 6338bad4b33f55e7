#include "oci/counting_store.h"

namespace imgtool::oci {

namespace {

// Counts the bytes of one blob as they pass; the counters outlive the store if need be.
template <typename Counters>
class CountingReader : public Reader {
 public:
  CountingReader(std::unique_ptr<Reader> inner, std::shared_ptr<Counters> counters)
      : inner_(std::move(inner)), counters_(std::move(counters)) {}
  Result<size_t> Read(void* buf, size_t n) override {
    auto got = inner_->Read(buf, n);
    if (got.ok()) counters_->bytes += *got;
    return got;
  }
  bool CanReadAt() const override { return inner_->CanReadAt(); }
  Result<size_t> ReadAt(uint64_t offset, void* buf, size_t n) override {
    auto got = inner_->ReadAt(offset, buf, n);
    if (got.ok()) counters_->bytes += *got;
    return got;
  }

 private:
  std::unique_ptr<Reader> inner_;
  std::shared_ptr<Counters> counters_;
};

}  // namespace

CountingStore::CountingStore(const BlobStore& inner) : inner_(inner) {}

Result<std::unique_ptr<Reader>> CountingStore::OpenBlob(const Descriptor& d) const {
  counters_->reads++;
  auto raw = inner_.OpenBlob(d);
  if (!raw.ok()) return raw.error();
  return std::unique_ptr<Reader>(std::make_unique<CountingReader<Counters>>(std::move(*raw), counters_));
}

Result<std::string> CountingStore::ReadManifest(const Descriptor& d) const {
  counters_->reads++;
  auto raw = inner_.ReadManifest(d);
  if (!raw.ok()) return raw.error();  // its bytes, read and refused inside, are not seen here
  counters_->bytes += raw->size();
  return raw;
}

ReadCounts CountingStore::counts() const { return {counters_->reads.load(), counters_->bytes.load()}; }

}  // namespace imgtool::oci
