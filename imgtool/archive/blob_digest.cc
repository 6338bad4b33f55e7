// DigestLayerBlob: one read of a blob gives both its digest (bytes as stored) and its
// diff_id (bytes decompressed), the two numbers verify needs.
//
// Decompression is done here rather than through libarchive's filters: ISA-L inflate is
// several times faster than zlib, and both decoders check what libarchive skips (gzip
// CRC32 and ISIZE of every member; zstd frame checksums). A stream that ends early,
// carries trailing garbage or fails a check is kIntegrity naming the blob.
#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "archive/archive_util.h"
#include "archive/gzip_member.h"
#include "archive/layer.h"
#include "fs/safe_open.h"

namespace imgtool::archive {

namespace {

constexpr size_t kChunk = 1 << 20;

// Receives the blob's bytes in order; hashes what it decompresses into `diff`.
class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual Status Feed(const uint8_t* data, size_t len) = 0;
  virtual Status End() = 0;  // the blob ended here
};

class GzipDecoder : public Decoder {
 public:
  GzipDecoder(const std::string& blob, oci::Sha256& diff)
      : blob_(blob), diff_(diff), state_(std::make_unique<inflate_state>()), out_(kChunk) {}

  Status Feed(const uint8_t* data, size_t len) override {
    state_->next_in = const_cast<uint8_t*>(data);
    state_->avail_in = static_cast<uint32_t>(len);
    while (state_->avail_in > 0) {
      if (!in_member_) {
        // A gzip file may hold several members back to back; each is checked on its own.
        if (members_ > 0 && state_->next_in[0] != 0x1f) {
          return MakeError(ErrorKind::kIntegrity, blob_ + ": trailing data after the gzip stream");
        }
        internal::StartGzipMember(state_.get());
        in_member_ = true;
      }
      do {
        state_->next_out = out_.data();
        state_->avail_out = static_cast<uint32_t>(out_.size());
        int rc = isal_inflate(state_.get());
        if (rc < 0) return Corrupt(rc);
        size_t produced = out_.size() - state_->avail_out;
        diff_.Update(out_.data(), produced);
      } while (state_->avail_out == 0 && state_->block_state != ISAL_BLOCK_FINISH);
      if (state_->block_state == ISAL_BLOCK_FINISH) {
        in_member_ = false;
        ++members_;
      }
    }
    return Status::Ok();
  }

  Status End() override {
    if (in_member_) return MakeError(ErrorKind::kIntegrity, blob_ + ": truncated gzip stream");
    return Status::Ok();
  }

 private:
  Error Corrupt(int rc) const {
    const char* why = "invalid data";
    switch (rc) {
      case ISAL_INVALID_BLOCK:
        why = "invalid deflate block";
        break;
      case ISAL_INVALID_SYMBOL:
        why = "invalid deflate symbol";
        break;
      case ISAL_INVALID_LOOKBACK:
        why = "invalid back reference";
        break;
      case ISAL_INVALID_WRAPPER:
        why = "bad gzip header or trailing garbage";
        break;
      case ISAL_UNSUPPORTED_METHOD:
        why = "not deflate";
        break;
      case ISAL_INCORRECT_CHECKSUM:
        why = "CRC32 or length mismatch";
        break;
      default:
        break;
    }
    return MakeError(ErrorKind::kIntegrity, blob_ + ": corrupt gzip stream (" + why + ")");
  }

  const std::string& blob_;
  oci::Sha256& diff_;
  std::unique_ptr<inflate_state> state_;  // ~tens of KiB of tables: on the heap
  std::vector<uint8_t> out_;
  bool in_member_ = false;
  uint64_t members_ = 0;
};

class ZstdDecoder : public Decoder {
 public:
  ZstdDecoder(const std::string& blob, oci::Sha256& diff)
      : blob_(blob), diff_(diff), dctx_(ZSTD_createDCtx()), out_(kChunk) {}

  Status Feed(const uint8_t* data, size_t len) override {
    if (!dctx_) return MakeError(ErrorKind::kInternal, "zstd: cannot create a decompression context");
    ZSTD_inBuffer in{data, len, 0};
    ZSTD_outBuffer out{out_.data(), out_.size(), 0};
    do {
      out.pos = 0;
      size_t rc = ZSTD_decompressStream(dctx_.get(), &out, &in);
      if (ZSTD_isError(rc)) {
        return MakeError(ErrorKind::kIntegrity, blob_ + ": corrupt zstd stream (" + ZSTD_getErrorName(rc) + ")");
      }
      diff_.Update(out_.data(), out.pos);
      frame_open_ = rc != 0;  // 0: a frame just ended and is fully flushed
    } while (in.pos < in.size || out.pos == out.size);
    return Status::Ok();
  }

  Status End() override {
    if (frame_open_) return MakeError(ErrorKind::kIntegrity, blob_ + ": truncated zstd stream");
    return Status::Ok();
  }

 private:
  struct DCtxFree {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
  };
  const std::string& blob_;
  oci::Sha256& diff_;
  std::unique_ptr<ZSTD_DCtx, DCtxFree> dctx_;
  std::vector<uint8_t> out_;
  bool frame_open_ = true;
};

std::unique_ptr<Decoder> DecoderFor(const uint8_t* head, size_t len, const std::string& blob, oci::Sha256& diff) {
  if (len >= 2 && head[0] == 0x1f && head[1] == 0x8b) return std::make_unique<GzipDecoder>(blob, diff);
  if (len >= 4 && head[0] == 0x28 && head[1] == 0xb5 && head[2] == 0x2f && head[3] == 0xfd) {
    return std::make_unique<ZstdDecoder>(blob, diff);
  }
  return nullptr;  // an uncompressed tar
}

Error Errno(const std::string& what) {
  int e = errno;
  return MakeError(e == ENOENT ? ErrorKind::kNotFound : ErrorKind::kInternal, what + ": " + std::strerror(e));
}

// Reads the blob once; hashes it as stored and what it decompresses to.
Result<BlobDigests> DigestStream(oci::Reader& in, const std::string& name, bool decompress) {
  std::unique_ptr<uint8_t[]> buf(new uint8_t[kChunk]);
  oci::Sha256 raw;
  oci::Sha256 diff;
  std::unique_ptr<Decoder> decoder;
  bool first = true;
  for (;;) {
    auto got = in.Read(buf.get(), kChunk);
    if (!got.ok()) return got.error();
    if (*got == 0) break;
    size_t len = *got;
    // The magic is in the first 4 bytes: a stream may hand them out a few at a time.
    while (first && len < 4) {
      auto more = in.Read(buf.get() + len, kChunk - len);
      if (!more.ok()) return more.error();
      if (*more == 0) break;
      len += *more;
    }
    raw.Update(buf.get(), len);
    if (first && decompress) decoder = DecoderFor(buf.get(), len, name, diff);
    first = false;
    if (decoder) IMGTOOL_TRY(decoder->Feed(buf.get(), len));
  }
  if (decoder) IMGTOOL_TRY(decoder->End());
  BlobDigests d;
  d.size = raw.bytes();
  d.uncompressed_size = decoder ? diff.bytes() : d.size;
  d.digest = raw.Finish();
  d.diff_id = decoder ? diff.Finish() : d.digest;
  return d;
}

}  // namespace

Result<BlobDigests> DigestLayer(oci::Reader& blob, const std::string& name, bool decompress) {
  return DigestStream(blob, name, decompress);
}

Result<BlobDigests> DigestLayerBlob(const std::string& blob_path) {
  fs::UniqueFd fd(::open(blob_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Errno("opening " + blob_path);
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  fs::FdReader reader(std::move(fd));
  return DigestStream(reader, blob_path, true);
}

}  // namespace imgtool::archive
