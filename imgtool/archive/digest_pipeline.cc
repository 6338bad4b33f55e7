#include "archive/digest_pipeline.h"

#include <system_error>
#include <thread>

#include "archive/buffer_pipe.h"

namespace imgtool::archive::internal {

namespace {

// Decodes straight into pipe buffers (no copy), handing each on when full.
class PipeSink : public DecodedSink {
 public:
  explicit PipeSink(BufferPipe& out) : out_(out) {}
  uint8_t* Room(size_t& size) override {
    if (cur_ == nullptr && (cur_ = out_.TakeEmpty()) == nullptr) return nullptr;
    size = cur_->capacity - cur_->size;
    return cur_->data.get() + cur_->size;
  }
  void Wrote(size_t n) override {
    cur_->size += n;
    if (cur_->size == cur_->capacity) Hand();
  }
  // The last, partly filled buffer.
  void Flush() {
    if (cur_ != nullptr && cur_->size > 0) Hand();
  }

 private:
  void Hand() {
    out_.PutFull(cur_);
    cur_ = nullptr;
  }
  BufferPipe& out_;
  BufferPipe::Buffer* cur_ = nullptr;
};

struct Stages {
  BufferPipe stored{kPipeBuffers, kPipeBufferBytes};   // reader -> inflater
  BufferPipe decoded{kPipeBuffers, kPipeBufferBytes};  // inflater -> hasher
  bool read_to_end = false;                            // set by the reader before it closes `stored`
  Status inflated;                                     // the inflater's error
};

// A failure cancels both pipes: the reader and the hasher stop at their next Take.
void Inflate(Stages& s, Decoder& decoder) {
  PipeSink sink(s.decoded);
  decoder.set_sink(&sink);
  auto fail = [&](Status st) {
    s.inflated = std::move(st);
    s.stored.Cancel();
    s.decoded.Cancel();
  };
  while (BufferPipe::Buffer* b = s.stored.TakeFull()) {
    Status st = decoder.Feed(b->data.get(), b->size);
    s.stored.PutEmpty(b);
    if (!st.ok()) return fail(std::move(st));
  }
  if (!s.read_to_end) {  // the read failed: its error is the answer, not End's
    s.decoded.Cancel();
    return;
  }
  if (Status st = decoder.End(); !st.ok()) return fail(std::move(st));
  sink.Flush();
  s.decoded.Close();
}

void Hash(BufferPipe& decoded, oci::Sha256& diff) {
  while (BufferPipe::Buffer* b = decoded.TakeFull()) {
    diff.Update(b->data.get(), b->size);
    decoded.PutEmpty(b);
  }
}

// The caller's stage: read, hash as stored, hand on. Returns the read's error.
Status Read(oci::Reader& in, oci::Sha256& raw, Stages& s) {
  Status failed;
  while (BufferPipe::Buffer* b = s.stored.TakeEmpty()) {
    auto got = in.Read(b->data.get(), b->capacity);
    if (!got.ok() || *got == 0) {
      s.stored.PutEmpty(b);
      if (got.ok())
        s.read_to_end = true;
      else
        failed = got.error();
      break;
    }
    raw.Update(b->data.get(), *got);
    b->size = *got;
    s.stored.PutFull(b);
  }
  s.stored.Close();
  return failed;
}

}  // namespace

std::optional<Status> DigestPipelined(oci::Reader& in, oci::Sha256& raw, Decoder& decoder, oci::Sha256& diff) {
  Stages s;
  std::thread hasher, inflater;
  try {
    hasher = std::thread(Hash, std::ref(s.decoded), std::ref(diff));
    inflater = std::thread(Inflate, std::ref(s), std::ref(decoder));
  } catch (const std::system_error&) {  // no threads to be had: nothing was consumed
    s.decoded.Close();
    if (hasher.joinable()) hasher.join();
    return std::nullopt;
  }
  Status read = Read(in, raw, s);
  inflater.join();
  hasher.join();
  if (!s.inflated.ok()) return s.inflated;  // in bytes read before any failed read
  return read;
}

}  // namespace imgtool::archive::internal
