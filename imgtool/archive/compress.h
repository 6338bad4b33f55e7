// Streaming compressors for layer blobs, with every parameter that shapes the output
// pinned here so a blob's bytes depend only on its tar stream, never on the CPU, the
// thread count or the builder's architecture:
//   gzip: our DEFLATE encoder (deflate.h) over fixed 1 MiB chunks encoded in parallel,
//         one member (parallel_gzip.h); our fixed 10-byte header (MTIME 0, no name,
//         OS 255), CRC32 and ISIZE.
//   zstd: libzstd level 1, checksum on, multithreaded streaming with `threads` workers
//         (that output is the same for any worker count >= 1, but differs from
//         single-threaded output, so a libzstd without threads is an error rather than a
//         silent fallback). Only promised within one libzstd version.
//   none: bytes passed through.
// Compressed bytes go to a ByteSink (the layer writer hashes and stores them).
//
// Internal to imgtool/archive: not part of layer.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "archive/layer.h"
#include "oci/result.h"

namespace imgtool::archive::internal {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual Status Write(const uint8_t* data, size_t len) = 0;
};

class Compressor {
 public:
  virtual ~Compressor() = default;
  // Feeds uncompressed bytes; compressed output may be held back until later calls.
  // The output does not depend on how the input is cut into calls.
  virtual Status Write(const uint8_t* data, size_t len) = 0;
  // Ends the stream and flushes everything (trailer included) to the sink.
  virtual Status Finish() = 0;
};

// The 10-byte gzip header every gzip layer starts with.
inline constexpr uint8_t kGzipHeader[10] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff};
inline constexpr int kZstdLevel = 1;
inline constexpr int kMaxCompressThreads = 64;

// threads: encoders at work at once (clamped to 1..kMaxCompressThreads); never changes
// the bytes.
Result<std::unique_ptr<Compressor>> NewCompressor(Compression c, ByteSink& sink, int threads);

}  // namespace imgtool::archive::internal
