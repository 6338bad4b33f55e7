// The push decoders behind DigestLayer: a layer's bytes as stored go in, in order, in
// chunks of any size; what they decompress to goes out through a DecodedSink. gzip by
// ISA-L (several times faster than zlib; every member's CRC32 and ISIZE checked, which
// libarchive skips), zstd by libzstd (frame checksums checked). A stream that ends
// early, carries trailing garbage or fails a check is kIntegrity naming the blob.
//
// The sink is the seam between one thread and a pipeline: hashing what comes out right
// away (blob_digest.cc), or handing pipe buffers to a hashing thread (digest_pipeline.h).
//
// Internal to imgtool/archive: not part of layer.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "oci/result.h"

namespace imgtool::archive::internal {

// Where a decoder writes: it asks for room, decodes into it, says how much it wrote.
class DecodedSink {
 public:
  virtual ~DecodedSink() = default;
  // Room to decode into (`size` > 0 bytes); nullptr once the consumer has stopped.
  virtual uint8_t* Room(size_t& size) = 0;
  // The first `n` bytes of the last Room hold output.
  virtual void Wrote(size_t n) = 0;
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual Status Feed(const uint8_t* data, size_t len) = 0;
  virtual Status End() = 0;  // the blob ended here
  // Where the output goes from now on (a digest may move to a pipeline mid-stream).
  void set_sink(DecodedSink* sink) { sink_ = sink; }

 protected:
  DecodedSink* sink_ = nullptr;
};

// The decoder for a stream starting with `head` (gzip or zstd magic), or nullptr for
// anything else (an uncompressed tar). Errors name `blob`.
std::unique_ptr<Decoder> DecoderFor(const uint8_t* head, size_t len, const std::string& blob);

// The error a decoder returns when its sink stopped (another stage failed first).
Error SinkStopped(const std::string& blob);

}  // namespace imgtool::archive::internal
