// The stages of WriteLayer after the tar stream exists, each on its own thread and
// joined by BufferPipes:
//
//   producer (caller's thread)  --pipe1-->  compress stage  --pipe2-->  write stage
//   files -> tar, sha256 = diff_id          gzip / zstd                 sha256 = digest,
//                                                                       blob file
//
// Why three threads on two cores: measured on the 2.6 GB CUDA layer, the write() of the
// blob costs as much kernel time as hashing it, and with hashing + writing next to the
// compressor that thread was the bottleneck while the producer idled half the time.
// Separate stages let the scheduler spread the work over both cores.
//
// Every stage records only its own failure; seeing a pipe cancelled is not one. The
// caller reports the most downstream failure first, since it is the cause of the rest.
//
// Internal to imgtool/archive: not part of layer.h.
#pragma once

#include <cstdint>
#include <span>

#include "archive/buffer_pipe.h"
#include "archive/compress.h"
#include "fs/atomic_file.h"
#include "oci/digest.h"
#include "oci/result.h"

namespace imgtool::archive::internal {

// Packs a byte stream into a pipe's buffers, optionally hashing each full buffer. The
// consumer therefore always sees whole buffers (the last one aside), however the bytes
// arrived: this keeps compressor input, hence output, independent of write sizes.
class PipeWriter : public ByteSink {
 public:
  PipeWriter(BufferPipe& pipe, bool hash) : pipe_(pipe), hash_(hash) {}

  bool Append(const void* data, size_t len);
  Status Write(const uint8_t* data, size_t len) override;
  // Free space at the end of the current buffer (a fresh buffer when it is full), for a
  // caller to fill in place before it Appends those same bytes: Append then only counts
  // them. The producer reads files this way, saving a copy of every byte. Empty once the
  // pipe is cancelled.
  std::span<uint8_t> Room();
  // Sends the last, partial buffer and closes the pipe.
  void Finish();

  uint64_t bytes() const { return bytes_; }
  oci::Digest digest() { return sha_.Finish(); }

 private:
  void Push();

  BufferPipe& pipe_;
  bool hash_;
  BufferPipe::Buffer* cur_ = nullptr;
  oci::Sha256 sha_;
  uint64_t bytes_ = 0;
};

// pipe `in` -> compressor (whose sink feeds `out`). Cancels both pipes on any failure.
void RunCompressStage(BufferPipe& in, Compressor& compressor, PipeWriter& out_writer, BufferPipe& out, Status* result);

// pipe `in` -> sha256 -> file. Cancels `in` on failure.
class WriteStage {
 public:
  explicit WriteStage(fs::AtomicFile& file) : file_(file) {}
  void Run(BufferPipe& in);

  const Status& status() const { return status_; }
  uint64_t bytes() const { return bytes_; }
  oci::Digest digest() { return sha_.Finish(); }

 private:
  fs::AtomicFile& file_;
  oci::Sha256 sha_;
  uint64_t bytes_ = 0;
  Status status_;
};

}  // namespace imgtool::archive::internal
