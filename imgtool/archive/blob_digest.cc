// DigestLayerBlob / DigestLayer: one read of a blob gives both its digest (bytes as
// stored) and its diff_id (bytes decompressed), the two numbers verify needs.
//
// Decompression is done here rather than through libarchive's filters (layer_decoder.h
// says why). A big layer read with a spare core (core_budget.h) goes on as a pipeline of
// three threads (digest_pipeline.h); otherwise each chunk is read, hashed, inflated and
// its output hashed on the caller's thread, which is the fastest order on one core.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "archive/digest_pipeline.h"
#include "archive/layer.h"
#include "archive/layer_decoder.h"
#include "fs/safe_open.h"

namespace imgtool::archive {

namespace {

constexpr size_t kChunk = 1 << 20;
// A layer goes on as a pipeline once this much is read: the threads and 4 MiB of pipes
// are not worth their start for the small blobs of an image.
constexpr uint64_t kPipelineAfter = 2 << 20;

// One thread: what is decoded is hashed at once, while it is still in the cache.
class HashingSink : public internal::DecodedSink {
 public:
  explicit HashingSink(oci::Sha256& diff) : diff_(diff), buf_(new uint8_t[kChunk]) {}
  uint8_t* Room(size_t& size) override {
    size = kChunk;
    return buf_.get();
  }
  void Wrote(size_t n) override { diff_.Update(buf_.get(), n); }

 private:
  oci::Sha256& diff_;
  std::unique_ptr<uint8_t[]> buf_;
};

Error Errno(const std::string& what) {
  int e = errno;
  return MakeError(e == ENOENT ? ErrorKind::kNotFound : ErrorKind::kInternal, what + ": " + std::strerror(e));
}

// The first chunk, at least the 4 bytes that hold the magic unless the stream is shorter
// (a stream may hand them out a few at a time).
Result<size_t> ReadHead(oci::Reader& in, uint8_t* buf) {
  size_t len = 0;
  while (len < 4) {
    auto got = in.Read(buf + len, kChunk - len);
    if (!got.ok()) return got.error();
    if (*got == 0) break;
    len += *got;
  }
  return len;
}

// Reads the blob once; hashes it as stored and what it decompresses to.
Result<BlobDigests> DigestStream(oci::Reader& in, const std::string& name, bool decompress, CoreBudget* cores) {
  std::unique_ptr<uint8_t[]> buf(new uint8_t[kChunk]);
  oci::Sha256 raw;
  oci::Sha256 diff;
  HashingSink sink(diff);
  auto head = ReadHead(in, buf.get());
  if (!head.ok()) return head.error();
  auto decoder = decompress ? internal::DecoderFor(buf.get(), *head, name) : nullptr;
  if (decoder) decoder->set_sink(&sink);
  if (!decoder) cores = nullptr;  // hashing alone: nothing to overlap
  bool ended = false;
  for (size_t len = *head; len > 0;) {
    raw.Update(buf.get(), len);
    if (decoder) IMGTOOL_TRY(decoder->Feed(buf.get(), len));
    if (cores && raw.bytes() >= kPipelineAfter && cores->TryTake()) {
      auto piped = internal::DigestPipelined(in, raw, *decoder, diff);
      cores->Give();
      if (piped) {
        IMGTOOL_TRY(*piped);
        ended = true;  // read to the end, End() passed
        break;
      }
      cores = nullptr;  // no threads: go on alone
    }
    auto got = in.Read(buf.get(), kChunk);
    if (!got.ok()) return got.error();
    len = *got;
  }
  if (decoder && !ended) IMGTOOL_TRY(decoder->End());
  BlobDigests d;
  d.size = raw.bytes();
  d.uncompressed_size = decoder ? diff.bytes() : d.size;
  d.digest = raw.Finish();
  d.diff_id = decoder ? diff.Finish() : d.digest;
  return d;
}

}  // namespace

Result<BlobDigests> DigestLayer(oci::Reader& blob, const std::string& name, bool decompress, CoreBudget* cores) {
  return DigestStream(blob, name, decompress, cores);
}

Result<BlobDigests> DigestLayerBlob(const std::string& blob_path) {
  fs::UniqueFd fd(::open(blob_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Errno("opening " + blob_path);
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  fs::FdReader reader(std::move(fd));
  return DigestStream(reader, blob_path, true, nullptr);
}

}  // namespace imgtool::archive
