// The stages of WriteLayer, each on its own thread and joined by BufferPipes:
//
//   producer (caller's thread)    tar pipe   hash stage: sha256 of the tar = diff_id,
//   files -> tar bytes, read     ---+----->  sha256 of each file's bytes (its spans)
//   straight into pipe buffers      |
//                                   +----->  compress stage  --blob pipe-->  write stage
//                                            gzip / zstd                     sha256 = digest,
//                                                                            blob file
//
// The tar pipe fans out: the hash and compress stages read the same buffers at the same
// time, so the producer only reads and frames (the three sha256 passes were ~20 % of the
// CPU, two of them on the producer, which made it the serial part of the pipeline).
// The write stage has its own thread because writing the blob costs as much kernel
// time as hashing it; with O_DIRECT (fs::AtomicFile::WriteDirect) much less.
//
// Every stage records only its own failure; seeing a pipe cancelled is not one. The
// caller reports the most downstream failure first, since it is the cause of the rest.
//
// Internal to imgtool/archive: not part of layer.h.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "archive/buffer_pipe.h"
#include "archive/compress.h"
#include "archive/layer.h"
#include "fs/atomic_file.h"
#include "oci/digest.h"
#include "oci/result.h"

namespace imgtool::archive::internal {

// Packs a byte stream into a pipe's buffers. The consumers therefore always see whole
// buffers (the last one aside), however the bytes arrived: this keeps compressor input,
// hence output, independent of write sizes. Bytes appended between BeginItem and
// EndItem are recorded as that item's spans (the hash stage digests each file from them).
class PipeWriter : public ByteSink {
 public:
  explicit PipeWriter(BufferPipe& pipe) : pipe_(pipe) {}

  bool Append(const void* data, size_t len);
  Status Write(const uint8_t* data, size_t len) override;
  // Free space at the end of the current buffer (a fresh buffer when it is full), for a
  // caller to fill in place before it Appends those same bytes: Append then only counts
  // them. The producer reads files this way, saving a copy of every byte. Empty once the
  // pipe is cancelled.
  std::span<uint8_t> Room();
  void BeginItem(uint32_t item) { item_ = item, in_item_ = true; }
  // Marks the item's end (a span of size 0, flagged last); false once cancelled.
  bool EndItem();
  // Sends the last, partial buffer and closes the pipe.
  void Finish();

  uint64_t bytes() const { return bytes_; }

 private:
  void Push();
  void Note(size_t offset, size_t len);

  BufferPipe& pipe_;
  BufferPipe::Buffer* cur_ = nullptr;
  uint64_t bytes_ = 0;
  uint32_t item_ = 0;
  bool in_item_ = false;
};

// Reads the tar pipe as one of its consumers: the diff_id (when `diff_id`) and the
// sha256 of every file, checked against Entry::expect_sha256. Cancels the pipe on a
// mismatch (kIntegrity naming the source and both digests).
class HashStage {
 public:
  HashStage(const std::vector<Entry>& entries, std::vector<oci::Digest>& file_digests, bool diff_id)
      : entries_(entries), file_digests_(file_digests), diff_id_(diff_id) {}
  void Run(BufferPipe& in, int consumer);

  const Status& status() const { return status_; }
  oci::Digest digest() { return sha_.Finish(); }

 private:
  Status EndFile(uint32_t item);

  const std::vector<Entry>& entries_;
  std::vector<oci::Digest>& file_digests_;
  bool diff_id_;
  oci::Sha256 sha_;
  oci::Sha256 file_;
  Status status_;
};

// pipe `in` -> compressor (whose sink feeds `out`). Cancels both pipes on any failure.
void RunCompressStage(BufferPipe& in, int consumer, Compressor& compressor, PipeWriter& out_writer, BufferPipe& out,
                      Status* result);

// pipe `in` -> sha256 -> file. Cancels `in` on failure.
class WriteStage {
 public:
  explicit WriteStage(fs::AtomicFile& file) : file_(file) {}
  void Run(BufferPipe& in, int consumer);

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
