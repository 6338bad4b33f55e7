// WriteLayer: entries -> tar -> compressed blob in one streaming pass.
//
//   caller's thread (producer)      tar pipe    hash thread: sha256 = diff_id, file digests
//   read file, 1 MiB at a time    ----+------>
//   libarchive -> tar bytes           +------>  compress thread  --blob pipe-->  write thread
//                                               gzip: N encoders                 sha256 = digest
//                                               zstd: N workers                  blob (O_DIRECT)
//
// Memory is the pipes (kTarBuffers + kBlobBuffers of 1 MiB) plus the compressor's
// state, whatever the layer size. layer_pipeline.h explains the split; README.md has the
// measurements.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <span>
#include <thread>

#include "archive/archive_util.h"
#include "archive/buffer_pipe.h"
#include "archive/compress.h"
#include "archive/entry_check.h"
#include "archive/layer.h"
#include "archive/layer_pipeline.h"
#include "archive/tar_writer.h"
#include "fs/cpus.h"

namespace imgtool::archive {

namespace {

using internal::BufferPipe;
using internal::PipeWriter;

// The compressor is fed whole pipe buffers, so this size is part of what fixes the gzip
// output bytes: changing it changes layer digests.
constexpr size_t kPipeBufferSize = 1 << 20;
constexpr size_t kTarBuffers = 12;
constexpr size_t kBlobBuffers = 4;
constexpr size_t kReadChunk = 1 << 20;
constexpr uint64_t kProgressStep = 64ull << 20;

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
  return MakeError(e == ENOENT ? ErrorKind::kNotFound : ErrorKind::kInternal, what + ": " + std::strerror(e));
}

// Streams one file's content into the tar; the header already promised `e.size` bytes,
// so any other count means the file changed under us. The file is read straight into
// the pipe buffer where libarchive would copy it (see PipeWriter::Room); its bytes are
// tagged as item `index`, which the hash stage digests (and checks against
// e.expect_sha256) off this thread.
Status StreamFile(const Entry& e, uint32_t index, internal::TarWriter& tar, PipeWriter& to_pipe, Progress& progress) {
  auto opened = OpenSource(e);
  if (!opened.ok()) return opened.error();
  const fs::UniqueFd& fd = *opened;
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  to_pipe.BeginItem(index);
  uint64_t got = 0;
  for (;;) {
    std::span<uint8_t> room = to_pipe.Room();
    if (room.empty()) return MakeError(ErrorKind::kInternal, "layer pipeline stopped");
    ssize_t n = ::read(fd.get(), room.data(), std::min(room.size(), kReadChunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("reading " + e.source);
    if (n == 0) break;
    // Bytes past e.size (a file that grew) are counted, never committed to the tar.
    uint64_t keep = got < e.size ? std::min<uint64_t>(static_cast<uint64_t>(n), e.size - got) : 0;
    if (keep > 0) {
      IMGTOOL_TRY(tar.WriteData(room.data(), keep));
      progress.Add(keep);
    }
    got += static_cast<uint64_t>(n);
  }
  if (got != e.size) {
    return MakeError(ErrorKind::kIntegrity, e.source + ": changed while building (expected " + std::to_string(e.size) +
                                                " bytes, read " + std::to_string(got) + ")");
  }
  if (!to_pipe.EndItem()) return MakeError(ErrorKind::kInternal, "layer pipeline stopped");
  return Status::Ok();
}

}  // namespace

Result<fs::UniqueFd> OpenSource(const Entry& e, uint64_t* size) {
  if (!e.source_root.empty()) {
    std::string prefix = e.source_root.back() == '/' ? e.source_root : e.source_root + "/";
    if (e.source.size() > prefix.size() && e.source.compare(0, prefix.size(), prefix) == 0) {
      return fs::OpenRegularBeneath(e.source_root, e.source.substr(prefix.size()), size);
    }
  }
  return fs::OpenRegularNoFollow(e.source, size);
}

namespace {

Status Produce(const std::vector<Entry>& entries, const LayerOptions& options, PipeWriter& to_pipe,
               std::vector<oci::Digest>& digests, Progress& progress) {
  internal::ScopedCLocale c_locale;  // header encoding must not follow the host's locale
  internal::TarWriter tar;
  IMGTOOL_TRY(tar.Open([&](const void* p, size_t n) { return to_pipe.Append(p, n); }));
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    IMGTOOL_TRY(tar.WriteHeader(e, internal::ContentSize(e), options.mtime));
    if (e.type != EntryType::kFile) continue;
    if (!e.source.empty()) {
      IMGTOOL_TRY(StreamFile(e, static_cast<uint32_t>(i), tar, to_pipe, progress));
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

Result<WrittenLayer> WriteLayer(const std::vector<Entry>& entries, const LayerOptions& options, fs::AtomicFile& out) {
  IMGTOOL_TRY(internal::CheckEntries(entries));
  uint64_t total = 0;
  for (const Entry& e : entries) total += internal::ContentSize(e);

  // The tar pipe's consumers: the hash stage (0) and the compress stage (1), or for an
  // uncompressed layer the write stage (1), whose hash is then both digest and diff_id.
  const bool plain = options.compression == Compression::kNone;
  BufferPipe tar_pipe(kTarBuffers, kPipeBufferSize, 2);
  BufferPipe blob_pipe(plain ? 0 : kBlobBuffers, kPipeBufferSize);
  PipeWriter tar_writer(tar_pipe);
  PipeWriter blob_writer(blob_pipe);
  std::unique_ptr<internal::Compressor> compressor;
  if (!plain) {
    auto c = internal::NewCompressor(
        options.compression, blob_writer,
        options.threads > 0 ? options.threads : std::min(fs::UsableCpus(), LayerOptions::kDefaultMaxThreads));
    if (!c.ok()) return c.error();
    compressor = std::move(*c);
  }

  WrittenLayer layer;
  layer.file_digests.resize(entries.size());
  if (options.direct_write) out.WriteDirect();
  internal::HashStage hash_stage(entries, layer.file_digests, !plain);
  internal::WriteStage write_stage(out);
  Status compressed;
  std::thread hasher([&] { hash_stage.Run(tar_pipe, 0); });
  std::thread writer([&] { plain ? write_stage.Run(tar_pipe, 1) : write_stage.Run(blob_pipe, 0); });
  std::thread compress;
  if (!plain) {
    compress = std::thread([&] { RunCompressStage(tar_pipe, 1, *compressor, blob_writer, blob_pipe, &compressed); });
  }
  Progress progress(options, total);
  Status produced = Produce(entries, options, tar_writer, layer.file_digests, progress);
  if (produced.ok()) {
    tar_writer.Finish();
  } else {
    tar_pipe.Cancel();
  }
  if (compress.joinable()) compress.join();
  writer.join();
  hasher.join();
  if (!write_stage.status().ok()) return write_stage.status().error();
  if (!compressed.ok()) return compressed.error();
  if (!hash_stage.status().ok()) return hash_stage.status().error();
  if (!produced.ok()) return produced.error();

  layer.digest = write_stage.digest();
  layer.size = write_stage.bytes();
  layer.diff_id = plain ? layer.digest : hash_stage.digest();
  layer.uncompressed_size = tar_writer.bytes();
  layer.media_type = LayerMediaType(options.compression);
  return layer;
}

}  // namespace imgtool::archive
