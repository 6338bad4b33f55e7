// gzip in parallel with bytes that depend only on the input (pigz's scheme, our encoder):
// the stream is cut into fixed 1 MiB chunks; each chunk is DEFLATE-encoded on its own
// (deflate.h), primed with the 32 KiB before it so matches can reach back across the cut,
// and ends byte-aligned with an empty stored block; the chunks are written in order as
// one gzip member behind our fixed header, then CRC32 and ISIZE. The thread count only
// decides how many chunks are encoded at once, never a byte of the output.
//
// Memory: threads + 4 chunks in flight (each 1 MiB + 32 KiB in, ~1 MiB out): one being
// filled, one per encoder, the rest finished and waiting for their turn to be written.
//
// Internal to imgtool/archive: not part of layer.h.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "archive/compress.h"
#include "archive/deflate.h"

namespace imgtool::archive::internal {

inline constexpr size_t kGzipChunk = 1 << 20;  // shapes the bytes: a constant

class ParallelGzip : public Compressor {
 public:
  // threads >= 1: 1 encodes on the caller's thread, more start that many workers.
  ParallelGzip(ByteSink& sink, int threads);
  ~ParallelGzip() override;

  Status Start();  // the header
  Status Write(const uint8_t* data, size_t len) override;
  Status Finish() override;

 private:
  struct Chunk {
    std::vector<uint8_t> input;  // dictionary, then the chunk's bytes
    size_t dict = 0;
    size_t size = 0;  // of input used, dictionary included
    bool last = false;
    bool done = false;
    std::vector<uint8_t> output;  // DeflateEncoder::Bound(kGzipChunk) bytes
    size_t output_size = 0;
  };

  Chunk& Filling() { return ring_[submitted_ % ring_.size()]; }
  Status BeginChunk();
  void Submit();
  Status WriteOldest();
  void Work();

  ByteSink& sink_;
  std::vector<Chunk> ring_;
  uint64_t submitted_ = 0;     // chunks handed to the encoders
  uint64_t written_ = 0;       // chunks whose output went to the sink
  bool filling_ = false;       // Filling() has been begun
  std::vector<uint8_t> tail_;  // the stream's last kDeflateWindow bytes so far
  uint32_t crc_ = 0;
  uint64_t total_ = 0;

  DeflateEncoder inline_encoder_;  // threads == 1
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable work_ready_, work_done_;
  std::deque<Chunk*> queue_;
  bool stopping_ = false;
};

}  // namespace imgtool::archive::internal
