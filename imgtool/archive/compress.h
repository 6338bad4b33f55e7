// Streaming compressors for layer blobs, with every parameter that shapes the output
// pinned here so a blob's bytes depend only on its tar stream (and the library versions):
//   gzip: ISA-L igzip level 1, our own fixed 10-byte header (MTIME 0, no name, OS 255),
//         trailer (CRC32, ISIZE) from ISA-L.
//   zstd: libzstd level 1, checksum on, 2 worker threads (multithreaded streaming output
//         does not depend on the worker count, but differs from single-threaded output,
//         so a libzstd without threads is an error rather than a silent fallback).
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
  // The gzip output also depends on how the input is cut into calls: feed it fixed-size
  // pieces (the layer writer always passes whole pipeline buffers).
  virtual Status Write(const uint8_t* data, size_t len) = 0;
  // Ends the stream and flushes everything (trailer included) to the sink.
  virtual Status Finish() = 0;
};

// The 10-byte gzip header every gzip layer starts with.
inline constexpr uint8_t kGzipHeader[10] = {0x1f, 0x8b, 0x08, 0x00, 0x00,
                                            0x00, 0x00, 0x00, 0x00, 0xff};
inline constexpr int kZstdLevel = 1;
inline constexpr int kZstdWorkers = 2;

Result<std::unique_ptr<Compressor>> NewCompressor(Compression c, ByteSink& sink);

}  // namespace imgtool::archive::internal
