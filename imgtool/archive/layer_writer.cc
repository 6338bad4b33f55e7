// WriteLayer: entries -> tar -> compressed blob in one pass on two threads.
//
//   calling thread (producer)             consumer thread
//   read file, 1 MiB at a time            take a full buffer
//   sha256 -> file_digests                compress (gzip: ISA-L; zstd: 2 libzstd workers)
//   libarchive -> tar bytes -> buffer     sha256 of compressed bytes = digest
//   sha256 of each full buffer = diff_id  write to the blob file
//            \__ BufferPipe: 8 x 1 MiB __/
//
// Balance (measured on 2 cores, see README): compression is the heavy stage, so the
// diff_id hash sits with the producer, which hashes each buffer while it is still in
// cache. Memory stays at the pipe plus the compressor's state whatever the layer size.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

#include "archive/archive_util.h"
#include "archive/buffer_pipe.h"
#include "archive/compress.h"
#include "archive/entry_check.h"
#include "archive/layer.h"
#include "archive/tar_writer.h"

namespace imgtool::archive {

namespace {

using internal::BufferPipe;

// The compressor is fed whole pipe buffers, so this size is part of what fixes the gzip
// output bytes: changing it changes layer digests.
constexpr size_t kPipeBuffers = 8;
constexpr size_t kPipeBufferSize = 1 << 20;
constexpr size_t kReadChunk = 1 << 20;
constexpr uint64_t kProgressStep = 64ull << 20;

// Producer end of the pipe: packs tar bytes into pipe buffers; hashes each full buffer.
class TarToPipe {
 public:
  TarToPipe(BufferPipe& pipe, bool hash) : pipe_(pipe), hash_(hash) {}

  bool Append(const void* data, size_t len) {
    const auto* p = static_cast<const uint8_t*>(data);
    while (len > 0) {
      if (cur_ == nullptr && (cur_ = pipe_.TakeEmpty()) == nullptr) return false;
      size_t n = std::min(len, cur_->capacity - cur_->size);
      std::memcpy(cur_->data.get() + cur_->size, p, n);
      cur_->size += n;
      p += n;
      len -= n;
      if (cur_->size == cur_->capacity) Push();
    }
    return true;
  }

  // Sends the last, partial buffer and tells the consumer the stream is complete.
  void Finish() {
    if (cur_ != nullptr) Push();
    pipe_.Close();
  }

  uint64_t bytes() const { return bytes_; }
  oci::Digest diff_id() { return diff_.Finish(); }

 private:
  void Push() {
    if (hash_) diff_.Update(cur_->data.get(), cur_->size);
    bytes_ += cur_->size;
    pipe_.PutFull(cur_);
    cur_ = nullptr;
  }

  BufferPipe& pipe_;
  bool hash_;
  BufferPipe::Buffer* cur_ = nullptr;
  oci::Sha256 diff_;
  uint64_t bytes_ = 0;
};

// Consumer end: hashes and stores compressed bytes.
class BlobSink : public internal::ByteSink {
 public:
  explicit BlobSink(fs::AtomicFile& out) : out_(out) {}
  Status Write(const uint8_t* data, size_t len) override {
    hash_.Update(data, len);
    size_ += len;
    return out_.Write(data, len);
  }
  uint64_t size() const { return size_; }
  oci::Digest digest() { return hash_.Finish(); }

 private:
  fs::AtomicFile& out_;
  oci::Sha256 hash_;
  uint64_t size_ = 0;
};

void RunConsumer(BufferPipe& pipe, internal::Compressor& compressor, Status* result) {
  while (BufferPipe::Buffer* b = pipe.TakeFull()) {
    Status st = compressor.Write(b->data.get(), b->size);
    pipe.PutEmpty(b);
    if (!st.ok()) {
      *result = st;
      pipe.Cancel();
      return;
    }
  }
  if (pipe.cancelled()) return;  // the producer failed and reports why
  *result = compressor.Finish();
  if (!result->ok()) pipe.Cancel();
}

class Progress {
 public:
  Progress(const LayerOptions& o, uint64_t total) : fn_(o.progress), total_(total) {
    if (fn_) fn_(0, total_);
  }
  void Add(uint64_t n) {
    done_ += n;
    if (fn_ && done_ >= next_) {
      fn_(done_, total_);
      next_ = done_ + kProgressStep;
    }
  }
  void End() {
    if (fn_ && done_ != last_reported()) fn_(done_, total_);
  }

 private:
  uint64_t last_reported() const { return next_ - kProgressStep; }
  const std::function<void(uint64_t, uint64_t)>& fn_;
  uint64_t total_;
  uint64_t done_ = 0;
  uint64_t next_ = kProgressStep;
};

Error Errno(const std::string& what) {
  int e = errno;
  return MakeError(e == ENOENT ? ErrorKind::kNotFound : ErrorKind::kInternal,
                   what + ": " + std::strerror(e));
}

int OpenForReading(const std::string& path) {
  // O_NOATIME spares an inode write per file; only the owner (or root) may ask for it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOATIME);
  if (fd < 0 && errno == EPERM) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  return fd;
}

// Streams one file's content into the tar, hashing it; the header already promised
// `e.size` bytes, so any other count means the file changed under us.
Status StreamFile(const Entry& e, internal::TarWriter& tar, uint8_t* buf, oci::Digest* digest,
                  Progress& progress) {
  internal::UniqueFd fd(OpenForReading(e.source));
  if (!fd.valid()) return Errno("opening " + e.source);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Errno("stat " + e.source);
  if (!S_ISREG(st.st_mode)) return MakeError(ErrorKind::kInvalidInput, e.source + ": not a regular file");
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  oci::Sha256 hash;
  uint64_t got = 0;
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, kReadChunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("reading " + e.source);
    if (n == 0) break;
    uint64_t keep = got < e.size ? std::min<uint64_t>(static_cast<uint64_t>(n), e.size - got) : 0;
    if (keep > 0) {
      hash.Update(buf, keep);
      IMGTOOL_TRY(tar.WriteData(buf, keep));
      progress.Add(keep);
    }
    got += static_cast<uint64_t>(n);
  }
  if (got != e.size) {
    return MakeError(ErrorKind::kIntegrity, e.source + ": changed while building (expected " +
                                                std::to_string(e.size) + " bytes, read " +
                                                std::to_string(got) + ")");
  }
  *digest = hash.Finish();
  return Status::Ok();
}

Status Produce(const std::vector<Entry>& entries, const LayerOptions& options, TarToPipe& to_pipe,
               std::vector<oci::Digest>& digests, Progress& progress) {
  internal::ScopedCLocale c_locale;  // header encoding must not follow the host's locale
  internal::TarWriter tar;
  IMGTOOL_TRY(tar.Open([&](const void* p, size_t n) { return to_pipe.Append(p, n); }));
  std::unique_ptr<uint8_t[]> buf(new uint8_t[kReadChunk]);
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    IMGTOOL_TRY(tar.WriteHeader(e, internal::ContentSize(e), options.mtime));
    if (e.type != EntryType::kFile) continue;
    if (!e.source.empty()) {
      IMGTOOL_TRY(StreamFile(e, tar, buf.get(), &digests[i], progress));
      continue;
    }
    if (!e.content.empty()) IMGTOOL_TRY(tar.WriteData(e.content.data(), e.content.size()));
    digests[i] = oci::Digest::Of(e.content);
    progress.Add(e.content.size());
  }
  IMGTOOL_TRY(tar.Close());
  progress.End();
  return Status::Ok();
}

}  // namespace

Result<WrittenLayer> WriteLayer(const std::vector<Entry>& entries, const LayerOptions& options,
                                fs::AtomicFile& out) {
  IMGTOOL_TRY(internal::CheckEntries(entries));
  uint64_t total = 0;
  for (const Entry& e : entries) total += internal::ContentSize(e);

  BufferPipe pipe(kPipeBuffers, kPipeBufferSize);
  BlobSink sink(out);
  auto compressor = internal::NewCompressor(options.compression, sink);
  if (!compressor.ok()) return compressor.error();
  // Uncompressed: the blob is the tar, so one hash serves as digest and diff_id.
  const bool plain = options.compression == Compression::kNone;
  TarToPipe to_pipe(pipe, !plain);

  WrittenLayer layer;
  layer.file_digests.resize(entries.size());
  Status consumed;
  std::thread consumer([&] { RunConsumer(pipe, **compressor, &consumed); });
  Progress progress(options, total);
  Status produced = Produce(entries, options, to_pipe, layer.file_digests, progress);
  if (produced.ok()) {
    to_pipe.Finish();
  } else {
    pipe.Cancel();
  }
  consumer.join();
  // A consumer failure (disk full) is the cause of any producer failure it provoked.
  if (!consumed.ok()) return consumed.error();
  if (!produced.ok()) return produced.error();

  layer.digest = sink.digest();
  layer.size = sink.size();
  layer.diff_id = plain ? layer.digest : to_pipe.diff_id();
  layer.uncompressed_size = to_pipe.bytes();
  layer.media_type = LayerMediaType(options.compression);
  return layer;
}

}  // namespace imgtool::archive
