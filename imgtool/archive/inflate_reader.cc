// Pull decoders for InflateReader. blob_digest.cc pushes whole input chunks through its
// decoders because it only hashes what comes out; here the caller's buffer bounds each
// step, which is what keeps a decompression bomb from costing memory.
#include "archive/inflate_reader.h"

#include <isa-l/igzip_lib.h>
#include <zstd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "archive/gzip_member.h"

namespace imgtool::archive {

namespace {

constexpr size_t kInputChunk = 256 << 10;

// The bytes read to tell the compression, then the rest of the stream.
class Source {
 public:
  Source(std::unique_ptr<oci::Reader> inner, std::string head) : inner_(std::move(inner)), head_(std::move(head)) {}
  Result<size_t> Read(void* buf, size_t n) {
    if (pos_ < head_.size()) {
      size_t k = std::min(n, head_.size() - pos_);
      std::memcpy(buf, head_.data() + pos_, k);
      pos_ += k;
      return k;
    }
    return inner_->Read(buf, n);
  }

 private:
  std::unique_ptr<oci::Reader> inner_;
  std::string head_;
  size_t pos_ = 0;
};

class PlainReader : public oci::Reader {
 public:
  explicit PlainReader(Source src) : src_(std::move(src)) {}
  Result<size_t> Read(void* buf, size_t n) override { return src_.Read(buf, n); }

 private:
  Source src_;
};

// Input from the source in chunks, shared by both decoders.
class Input {
 public:
  explicit Input(Source src) : src_(std::move(src)), buf_(kInputChunk) {}
  // Reads the next chunk; eof() once the source ended.
  Result<size_t> Fill() {
    auto got = src_.Read(buf_.data(), buf_.size());
    if (!got.ok()) return got.error();
    if (*got == 0) eof_ = true;
    return *got;
  }
  uint8_t* data() { return buf_.data(); }
  bool eof() const { return eof_; }

 private:
  Source src_;
  std::vector<uint8_t> buf_;
  bool eof_ = false;
};

class GzipReader : public oci::Reader {
 public:
  GzipReader(Source src, std::string name)
      : in_(std::move(src)), name_(std::move(name)), state_(std::make_unique<inflate_state>()) {
    state_->avail_in = 0;
  }

  Result<size_t> Read(void* buf, size_t n) override {
    if (n == 0) return size_t{0};
    for (;;) {
      if (state_->avail_in == 0 && !in_.eof()) {
        auto got = in_.Fill();
        if (!got.ok()) return got.error();
        state_->next_in = in_.data();
        state_->avail_in = static_cast<uint32_t>(*got);
      }
      if (!in_member_) {
        if (state_->avail_in == 0) return size_t{0};  // the source ended between members
        // A gzip file may hold several members back to back; each is checked on its own.
        if (state_->next_in[0] != 0x1f) return Fail("trailing data after the gzip stream");
        StartMember();
      }
      const size_t room = std::min<size_t>(n, UINT32_MAX);
      state_->next_out = static_cast<uint8_t*>(buf);
      state_->avail_out = static_cast<uint32_t>(room);
      const uint32_t avail_before = state_->avail_in;
      int rc = isal_inflate(state_.get());
      if (rc < 0) return Corrupt(rc);
      size_t produced = room - state_->avail_out;
      if (state_->block_state == ISAL_BLOCK_FINISH) in_member_ = false;
      if (produced > 0) return produced;
      if (in_member_ && state_->avail_in == 0 && in_.eof()) return Fail("truncated gzip stream");
      if (in_member_ && state_->avail_in > 0 && state_->avail_in == avail_before) {
        return Fail("corrupt gzip stream (no progress)");
      }
    }
  }

 private:
  void StartMember() {
    internal::StartGzipMember(state_.get());
    in_member_ = true;
  }
  Error Fail(const std::string& why) const { return MakeError(ErrorKind::kIntegrity, name_ + ": " + why); }
  Error Corrupt(int rc) const {
    switch (rc) {
      case ISAL_INCORRECT_CHECKSUM:
        return Fail("corrupt gzip stream (CRC32 or length mismatch)");
      case ISAL_INVALID_WRAPPER:
        return Fail("corrupt gzip stream (bad gzip header or trailing garbage)");
      default:
        return Fail("corrupt gzip stream (invalid deflate data)");
    }
  }

  Input in_;
  std::string name_;
  std::unique_ptr<inflate_state> state_;  // ~tens of KiB of tables: on the heap
  bool in_member_ = false;
};

class ZstdReader : public oci::Reader {
 public:
  ZstdReader(Source src, std::string name) : in_(std::move(src)), name_(std::move(name)), dctx_(ZSTD_createDCtx()) {}

  Result<size_t> Read(void* buf, size_t n) override {
    if (!dctx_) return MakeError(ErrorKind::kInternal, "zstd: cannot create a decompression context");
    if (n == 0) return size_t{0};
    for (;;) {
      if (pos_ == size_ && !in_.eof()) {
        auto got = in_.Fill();
        if (!got.ok()) return got.error();
        pos_ = 0;
        size_ = *got;
      }
      if (pos_ == size_ && in_.eof() && !frame_open_) return size_t{0};
      ZSTD_inBuffer in{in_.data(), size_, pos_};
      ZSTD_outBuffer out{buf, n, 0};
      size_t rc = ZSTD_decompressStream(dctx_.get(), &out, &in);
      if (ZSTD_isError(rc)) {
        return MakeError(ErrorKind::kIntegrity, name_ + ": corrupt zstd stream (" + ZSTD_getErrorName(rc) + ")");
      }
      const bool moved = in.pos != pos_;
      pos_ = in.pos;
      frame_open_ = rc != 0;  // 0: a frame just ended and is fully flushed
      if (out.pos > 0) return out.pos;
      if (pos_ == size_ && in_.eof() && frame_open_) {
        return MakeError(ErrorKind::kIntegrity, name_ + ": truncated zstd stream");
      }
      if (!moved && pos_ < size_)
        return MakeError(ErrorKind::kIntegrity, name_ + ": corrupt zstd stream (no progress)");
    }
  }

 private:
  struct DCtxFree {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
  };
  Input in_;
  std::string name_;
  std::unique_ptr<ZSTD_DCtx, DCtxFree> dctx_;
  size_t pos_ = 0, size_ = 0;
  bool frame_open_ = true;
};

}  // namespace

Result<Inflating> InflateReader(std::unique_ptr<oci::Reader> compressed, const std::string& name) {
  // The magic is in the first 4 bytes: a stream may hand them out a few at a time.
  std::string head(4, '\0');
  size_t have = 0;
  while (have < head.size()) {
    auto got = compressed->Read(head.data() + have, head.size() - have);
    if (!got.ok()) return got.error();
    if (*got == 0) break;
    have += *got;
  }
  head.resize(have);
  const auto* h = reinterpret_cast<const uint8_t*>(head.data());
  Source src(std::move(compressed), head);
  if (have >= 2 && h[0] == 0x1f && h[1] == 0x8b) {
    return Inflating{std::make_unique<GzipReader>(std::move(src), name), Compression::kGzip};
  }
  if (have >= 4 && h[0] == 0x28 && h[1] == 0xb5 && h[2] == 0x2f && h[3] == 0xfd) {
    return Inflating{std::make_unique<ZstdReader>(std::move(src), name), Compression::kZstd};
  }
  return Inflating{std::make_unique<PlainReader>(std::move(src)), Compression::kNone};
}

}  // namespace imgtool::archive
