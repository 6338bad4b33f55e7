#include "archive/parallel_gzip.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <cstring>

namespace imgtool::archive::internal {

ParallelGzip::ParallelGzip(ByteSink& sink, int threads) : sink_(sink), ring_(threads > 1 ? size_t(threads) + 4 : 1) {
  for (Chunk& c : ring_) {
    c.input.resize(kDeflateWindow + kGzipChunk);
    c.output.resize(DeflateEncoder::Bound(kGzipChunk));
  }
  tail_.reserve(kDeflateWindow);
  for (int k = 0; threads > 1 && k < threads; ++k) workers_.emplace_back([this] { Work(); });
}

ParallelGzip::~ParallelGzip() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : workers_) t.join();
}

Status ParallelGzip::Start() { return sink_.Write(kGzipHeader, sizeof(kGzipHeader)); }

void ParallelGzip::Work() {
  DeflateEncoder encoder;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    Chunk* c = queue_.front();
    queue_.pop_front();
    lock.unlock();
    c->output_size = encoder.EncodeChunk(c->input.data(), c->dict, c->size, c->last, c->output.data());
    lock.lock();
    c->done = true;
    work_done_.notify_all();
  }
}

// Takes the next ring slot (writing out the chunk that held it) and primes it with the
// stream's last 32 KiB.
Status ParallelGzip::BeginChunk() {
  if (submitted_ - written_ == ring_.size()) IMGTOOL_TRY(WriteOldest());
  Chunk& c = Filling();
  c.dict = tail_.size();
  std::memcpy(c.input.data(), tail_.data(), c.dict);
  c.size = c.dict;
  c.last = false;
  c.done = false;
  filling_ = true;
  return Status::Ok();
}

void ParallelGzip::Submit() {
  Chunk& c = Filling();
  size_t keep = std::min(c.size, kDeflateWindow);
  tail_.assign(c.input.data() + c.size - keep, c.input.data() + c.size);
  ++submitted_;
  filling_ = false;
  if (workers_.empty()) {
    c.output_size = inline_encoder_.EncodeChunk(c.input.data(), c.dict, c.size, c.last, c.output.data());
    c.done = true;
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(&c);
  }
  work_ready_.notify_one();
}

Status ParallelGzip::WriteOldest() {
  Chunk& c = ring_[written_ % ring_.size()];
  {
    std::unique_lock<std::mutex> lock(mu_);
    work_done_.wait(lock, [&c] { return c.done; });
  }
  ++written_;
  return sink_.Write(c.output.data(), c.output_size);
}

Status ParallelGzip::Write(const uint8_t* data, size_t len) {
  crc_ = crc32_gzip_refl(crc_, data, len);
  total_ += len;
  while (len > 0) {
    if (!filling_) IMGTOOL_TRY(BeginChunk());
    Chunk& c = Filling();
    size_t room = c.dict + kGzipChunk - c.size;
    size_t piece = std::min(room, len);
    std::memcpy(c.input.data() + c.size, data, piece);
    c.size += piece;
    data += piece;
    len -= piece;
    if (piece == room) Submit();
  }
  return Status::Ok();
}

Status ParallelGzip::Finish() {
  if (!filling_) IMGTOOL_TRY(BeginChunk());
  Filling().last = true;  // possibly empty: then it is the empty final block
  Submit();
  while (written_ < submitted_) IMGTOOL_TRY(WriteOldest());
  uint32_t isize = static_cast<uint32_t>(total_);  // RFC 1952: the size modulo 2^32
  uint8_t trailer[8];
  for (int k = 0; k < 4; ++k) {
    trailer[k] = uint8_t(crc_ >> (8 * k));
    trailer[4 + k] = uint8_t(isize >> (8 * k));
  }
  return sink_.Write(trailer, sizeof(trailer));
}

}  // namespace imgtool::archive::internal
