#include "archive/compress.h"

#include <zstd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "archive/parallel_gzip.h"

namespace imgtool::archive::internal {

namespace {

// Output chunk handed to the sink.
constexpr size_t kOutChunk = 512 << 10;

Error CompressError(const std::string& what) { return MakeError(ErrorKind::kInternal, what); }

class ZstdCompressor : public Compressor {
 public:
  ZstdCompressor(ByteSink& sink, int workers)
      : sink_(sink), workers_(workers), cctx_(ZSTD_createCCtx()), out_(kOutChunk) {}

  Status Init() {
    if (!cctx_) return CompressError("zstd: cannot create a compression context");
    IMGTOOL_TRY(Set(ZSTD_c_compressionLevel, kZstdLevel, "level"));
    IMGTOOL_TRY(Set(ZSTD_c_checksumFlag, 1, "checksum"));
    if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_nbWorkers, workers_))) {
      return CompressError(
          "zstd: this libzstd has no multithreading; zstd layers need it (its output differs "
          "from single-threaded zstd, so there is no fallback)");
    }
    return Status::Ok();
  }

  Status Write(const uint8_t* data, size_t len) override {
    // Never start with ZSTD_e_end: that one-shot path cut jobs by worker count in some
    // libzstd versions (facebook/zstd#2327). Streaming with e_continue does not.
    ZSTD_inBuffer in{data, len, 0};
    while (in.pos < in.size) IMGTOOL_TRY(Step(&in, ZSTD_e_continue, nullptr));
    return Status::Ok();
  }

  Status Finish() override {
    ZSTD_inBuffer in{nullptr, 0, 0};
    size_t remaining = 1;
    while (remaining != 0) IMGTOOL_TRY(Step(&in, ZSTD_e_end, &remaining));
    return Status::Ok();
  }

 private:
  struct CCtxFree {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
  };

  Status Set(ZSTD_cParameter p, int value, const char* name) {
    size_t rc = ZSTD_CCtx_setParameter(cctx_.get(), p, value);
    if (ZSTD_isError(rc)) {
      return CompressError(std::string("zstd: setting ") + name + ": " + ZSTD_getErrorName(rc));
    }
    return Status::Ok();
  }

  Status Step(ZSTD_inBuffer* in, ZSTD_EndDirective op, size_t* remaining) {
    ZSTD_outBuffer out{out_.data(), out_.size(), 0};
    size_t rc = ZSTD_compressStream2(cctx_.get(), &out, in, op);
    if (ZSTD_isError(rc)) return CompressError(std::string("zstd: ") + ZSTD_getErrorName(rc));
    if (remaining != nullptr) *remaining = rc;
    if (out.pos > 0) return sink_.Write(out_.data(), out.pos);
    return Status::Ok();
  }

  ByteSink& sink_;
  int workers_;
  std::unique_ptr<ZSTD_CCtx, CCtxFree> cctx_;
  std::vector<uint8_t> out_;
};

class PassThrough : public Compressor {
 public:
  explicit PassThrough(ByteSink& sink) : sink_(sink) {}
  Status Write(const uint8_t* data, size_t len) override { return sink_.Write(data, len); }
  Status Finish() override { return Status::Ok(); }

 private:
  ByteSink& sink_;
};

}  // namespace

Result<std::unique_ptr<Compressor>> NewCompressor(Compression c, ByteSink& sink, int threads) {
  threads = std::clamp(threads, 1, kMaxCompressThreads);
  switch (c) {
    case Compression::kGzip: {
      auto gz = std::make_unique<ParallelGzip>(sink, threads);
      IMGTOOL_TRY(gz->Start());
      return std::unique_ptr<Compressor>(std::move(gz));
    }
    case Compression::kZstd: {
      auto zs = std::make_unique<ZstdCompressor>(sink, threads);
      IMGTOOL_TRY(zs->Init());
      return std::unique_ptr<Compressor>(std::move(zs));
    }
    case Compression::kNone:
      return std::unique_ptr<Compressor>(std::make_unique<PassThrough>(sink));
  }
  return CompressError("unknown compression");
}

}  // namespace imgtool::archive::internal

namespace imgtool::archive {

CompressorInfo DescribeCompressor(Compression c) {
  using internal::kGzipChunk;
  switch (c) {
    case Compression::kGzip:
      return {"imgtool-deflate", std::to_string(internal::kDeflateVersion),
              "gzip, one member; greedy LZ77 (4-byte hash, 32 KiB window), dynamic Huffman or "
              "stored per 128 KiB block; " +
                  std::to_string(kGzipChunk >> 20) + " MiB chunks primed with the previous 32 KiB; any thread count"};
    case Compression::kZstd:
      return {"libzstd", ZSTD_versionString(),
              "level " + std::to_string(internal::kZstdLevel) +
                  ", checksum, multithreaded streaming (the same for any worker count >= 1)"};
    case Compression::kNone:
      return {"none", "", "uncompressed tar"};
  }
  return {"none", "", ""};
}

}  // namespace imgtool::archive
