#include "archive/layer_decoder.h"

#include <isa-l/igzip_lib.h>
#include <zstd.h>

#include "archive/gzip_member.h"

namespace imgtool::archive::internal {

namespace {

class GzipDecoder : public Decoder {
 public:
  explicit GzipDecoder(const std::string& blob) : blob_(blob), state_(std::make_unique<inflate_state>()) {}

  Status Feed(const uint8_t* data, size_t len) override {
    state_->next_in = const_cast<uint8_t*>(data);
    state_->avail_in = static_cast<uint32_t>(len);
    while (state_->avail_in > 0) {
      if (!in_member_) {
        // A gzip file may hold several members back to back; each is checked on its own.
        if (members_ > 0 && state_->next_in[0] != 0x1f) {
          return MakeError(ErrorKind::kIntegrity, blob_ + ": trailing data after the gzip stream");
        }
        StartGzipMember(state_.get());
        in_member_ = true;
      }
      do {
        size_t room = 0;
        uint8_t* out = sink_->Room(room);
        if (out == nullptr) return SinkStopped(blob_);
        state_->next_out = out;
        state_->avail_out = static_cast<uint32_t>(room);
        int rc = isal_inflate(state_.get());
        if (rc < 0) return Corrupt(rc);
        sink_->Wrote(room - state_->avail_out);
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

  std::string blob_;
  std::unique_ptr<inflate_state> state_;  // ~tens of KiB of tables: on the heap
  bool in_member_ = false;
  uint64_t members_ = 0;
};

class ZstdDecoder : public Decoder {
 public:
  explicit ZstdDecoder(const std::string& blob) : blob_(blob), dctx_(ZSTD_createDCtx()) {}

  Status Feed(const uint8_t* data, size_t len) override {
    if (!dctx_) return MakeError(ErrorKind::kInternal, "zstd: cannot create a decompression context");
    ZSTD_inBuffer in{data, len, 0};
    ZSTD_outBuffer out{nullptr, 0, 0};
    do {
      size_t room = 0;
      out.dst = sink_->Room(room);
      if (out.dst == nullptr) return SinkStopped(blob_);
      out.size = room;
      out.pos = 0;
      size_t rc = ZSTD_decompressStream(dctx_.get(), &out, &in);
      if (ZSTD_isError(rc)) {
        return MakeError(ErrorKind::kIntegrity, blob_ + ": corrupt zstd stream (" + ZSTD_getErrorName(rc) + ")");
      }
      sink_->Wrote(out.pos);
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
  std::string blob_;
  std::unique_ptr<ZSTD_DCtx, DCtxFree> dctx_;
  bool frame_open_ = true;
};

}  // namespace

std::unique_ptr<Decoder> DecoderFor(const uint8_t* head, size_t len, const std::string& blob) {
  if (len >= 2 && head[0] == 0x1f && head[1] == 0x8b) return std::make_unique<GzipDecoder>(blob);
  if (len >= 4 && head[0] == 0x28 && head[1] == 0xb5 && head[2] == 0x2f && head[3] == 0xfd) {
    return std::make_unique<ZstdDecoder>(blob);
  }
  return nullptr;  // an uncompressed tar
}

Error SinkStopped(const std::string& blob) {
  return MakeError(ErrorKind::kInternal, blob + ": decoding stopped (another stage failed)");
}

}  // namespace imgtool::archive::internal
