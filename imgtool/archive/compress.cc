#include "archive/compress.h"

#include <isa-l/igzip_lib.h>
#include <zstd.h>

#include <algorithm>
#include <string>
#include <vector>

namespace imgtool::archive::internal {

namespace {

// Output chunk handed to the sink. Part of the gzip determinism contract (ISA-L may
// cut its work differently for a different output size), so a constant.
constexpr size_t kOutChunk = 512 << 10;

Error CompressError(const std::string& what) { return MakeError(ErrorKind::kInternal, what); }

class GzipCompressor : public Compressor {
 public:
  explicit GzipCompressor(ByteSink& sink)
      : sink_(sink),
        stream_(std::make_unique<isal_zstream>()),
        level_buf_(kLevelBufSize),
        out_(kOutChunk) {
    isal_deflate_init(stream_.get());
    stream_->level = 1;
    stream_->level_buf = level_buf_.data();
    stream_->level_buf_size = static_cast<uint32_t>(level_buf_.size());
    stream_->gzip_flag = IGZIP_GZIP_NO_HDR;  // we write the header; ISA-L the trailer
    stream_->hist_bits = 15;                 // the full 32 KiB deflate window
    stream_->flush = NO_FLUSH;
    stream_->end_of_stream = 0;
  }

  Status Start() { return sink_.Write(kGzipHeader, sizeof(kGzipHeader)); }

  Status Write(const uint8_t* data, size_t len) override {
    while (len > 0) {
      // avail_in is 32 bits wide.
      size_t piece = std::min<size_t>(len, 1u << 30);
      stream_->next_in = const_cast<uint8_t*>(data);
      stream_->avail_in = static_cast<uint32_t>(piece);
      while (stream_->avail_in > 0) IMGTOOL_TRY(Step());
      data += piece;
      len -= piece;
    }
    return Status::Ok();
  }

  Status Finish() override {
    stream_->end_of_stream = 1;
    stream_->next_in = nullptr;
    stream_->avail_in = 0;
    while (stream_->internal_state.state != ZSTATE_END) IMGTOOL_TRY(Step());
    return Status::Ok();
  }

 private:
  // The level buffer size decides ISA-L's block size, hence the output bytes: pinned.
  static constexpr size_t kLevelBufSize = ISAL_DEF_LVL1_LARGE;

  Status Step() {
    uint32_t in_before = stream_->avail_in;
    stream_->next_out = out_.data();
    stream_->avail_out = static_cast<uint32_t>(out_.size());
    int rc = isal_deflate(stream_.get());
    if (rc != COMP_OK)
      return CompressError("gzip: isal_deflate failed (" + std::to_string(rc) + ")");
    size_t produced = out_.size() - stream_->avail_out;
    if (produced == 0 && stream_->avail_in == in_before &&
        stream_->internal_state.state != ZSTATE_END) {
      return CompressError("gzip: isal_deflate made no progress");
    }
    if (produced > 0) return sink_.Write(out_.data(), produced);
    return Status::Ok();
  }

  ByteSink& sink_;
  std::unique_ptr<isal_zstream> stream_;  // large (history buffer inside): on the heap
  std::vector<uint8_t> level_buf_;
  std::vector<uint8_t> out_;
};

class ZstdCompressor : public Compressor {
 public:
  explicit ZstdCompressor(ByteSink& sink)
      : sink_(sink), cctx_(ZSTD_createCCtx()), out_(kOutChunk) {}

  Status Init() {
    if (!cctx_) return CompressError("zstd: cannot create a compression context");
    IMGTOOL_TRY(Set(ZSTD_c_compressionLevel, kZstdLevel, "level"));
    IMGTOOL_TRY(Set(ZSTD_c_checksumFlag, 1, "checksum"));
    if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_nbWorkers, kZstdWorkers))) {
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

Result<std::unique_ptr<Compressor>> NewCompressor(Compression c, ByteSink& sink) {
  switch (c) {
    case Compression::kGzip: {
      auto gz = std::make_unique<GzipCompressor>(sink);
      IMGTOOL_TRY(gz->Start());
      return std::unique_ptr<Compressor>(std::move(gz));
    }
    case Compression::kZstd: {
      auto zs = std::make_unique<ZstdCompressor>(sink);
      IMGTOOL_TRY(zs->Init());
      return std::unique_ptr<Compressor>(std::move(zs));
    }
    case Compression::kNone:
      return std::unique_ptr<Compressor>(std::make_unique<PassThrough>(sink));
  }
  return CompressError("unknown compression");
}

}  // namespace imgtool::archive::internal
