#include "remote/hashing_body.h"

#include <algorithm>
#include <cstring>

namespace imgtool::remote {

HashingBody::HashingBody(oci::Reader& inner, uint64_t size, size_t slot_bytes, size_t slots)
    : inner_(inner), size_(size), slot_bytes_(std::max<size_t>(slot_bytes, 1)), ring_(std::max<size_t>(slots, 1)) {}

HashingBody::~HashingBody() { Stop(); }

void HashingBody::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

Result<size_t> HashingBody::Read(void*, size_t) { return MakeError(ErrorKind::kInternal, "sequential read"); }

Result<size_t> HashingBody::SourceAt(uint64_t offset, char* buf, size_t n) {
  std::lock_guard<std::mutex> lock(io_mu_);
  return inner_.ReadAt(offset, buf, n);
}

bool HashingBody::WorkReady() {
  if (hash_slot_ < filled_) {
    const Slot& h = ring_[hash_slot_ % ring_.size()];
    if (h.taken > h.hashed) return true;
  }
  return filled_ - hash_slot_ < ring_.size() && !eof_ && !error_;
}

// A whole slot from the source (several reads if it answers short); 0 at its end.
Result<size_t> HashingBody::Fill(Slot& s, uint64_t at) {
  size_t want = static_cast<size_t>(std::min<uint64_t>(s.bytes.size(), size_ - at));
  size_t len = 0;
  while (len < want) {
    auto got = SourceAt(at + len, s.bytes.data() + len, want - len);
    if (!got.ok()) return got.error();
    if (*got == 0) break;
    len += *got;
  }
  return len;
}

void HashingBody::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || WorkReady(); });
    if (stop_) return;
    Slot& h = ring_[hash_slot_ % ring_.size()];
    if (hash_slot_ < filled_ && h.taken > h.hashed) {
      // [hashed, taken) is neither written by the worker nor changed by the consumer.
      const char* p = h.bytes.data() + h.hashed;
      size_t k = h.taken - h.hashed;
      lock.unlock();
      hash_.Update(p, k);
      lock.lock();
      h.hashed += k;
      hashed_total_ += k;
      if (h.hashed == h.len) ++hash_slot_;
    } else {
      // The slot after the last filled one is free: every slot before it was hashed whole.
      Slot& f = ring_[filled_ % ring_.size()];
      uint64_t at = read_pos_;
      lock.unlock();
      auto got = at < size_ ? Fill(f, at) : Result<size_t>(size_t{0});
      lock.lock();
      if (!got.ok()) {
        error_ = got.error();
      } else if (*got == 0) {
        eof_ = true;
      } else {
        f.len = *got;
        f.taken = f.hashed = 0;
        ++filled_;
        read_pos_ += *got;
        eof_ = read_pos_ >= size_;
      }
    }
    cv_.notify_all();
  }
}

Result<size_t> HashingBody::Take(char* buf, size_t n) {
  std::unique_lock<std::mutex> lock(mu_);
  if (stop_) return MakeError(ErrorKind::kInternal, "upload body: read after its check");
  if (!worker_.joinable()) {
    // Allocated here, not by the worker: a failure is this thread's exception.
    for (auto& slot : ring_) slot.bytes.resize(static_cast<size_t>(std::min<uint64_t>(slot_bytes_, size_)));
    worker_ = std::thread([this] { Work(); });
  }
  cv_.wait(lock, [&] { return take_slot_ < filled_ || eof_ || error_; });
  if (take_slot_ == filled_) {
    if (error_) return *error_;
    return size_t{0};
  }
  Slot& s = ring_[take_slot_ % ring_.size()];
  size_t k = std::min(n, s.len - s.taken);
  // The worker neither rewrites this slot (not yet hashed whole) nor reads past `taken`.
  lock.unlock();
  if (buf) std::memcpy(buf, s.bytes.data() + s.taken, k);
  lock.lock();
  s.taken += k;
  taken_ += k;
  if (s.taken == s.len) ++take_slot_;
  lock.unlock();
  cv_.notify_all();
  return k;
}

Result<size_t> HashingBody::ReadAt(uint64_t offset, void* buf, size_t n) {
  if (n == 0) return size_t{0};
  // Sent again after a reset: hashed the first time.
  if (offset < taken_) {
    return SourceAt(offset, static_cast<char*>(buf), static_cast<size_t>(std::min<uint64_t>(n, taken_ - offset)));
  }
  if (offset > taken_) {
    IMGTOOL_TRY(CatchUp(offset));
    if (taken_ < offset) return size_t{0};
  }
  size_t done = 0;
  while (done < n) {
    auto got = Take(static_cast<char*>(buf) + done, n - done);
    if (!got.ok()) return got.error();
    if (*got == 0) break;
    done += *got;
  }
  return done;
}

Status HashingBody::CatchUp(uint64_t upto) {
  while (taken_ < upto) {
    auto got = Take(nullptr, static_cast<size_t>(std::min<uint64_t>(upto - taken_, SIZE_MAX)));
    if (!got.ok()) return got.error();
    if (*got == 0) break;
  }
  return Status::Ok();
}

Status HashingBody::Check(const oci::Descriptor& d, const std::string& what) {
  IMGTOOL_TRY(CatchUp(static_cast<uint64_t>(d.size)));
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return hashed_total_ == taken_ || !worker_.joinable(); });
  }
  Stop();  // hash_ is ours alone from here
  char extra;
  auto beyond = SourceAt(static_cast<uint64_t>(d.size), &extra, 1);
  if (!beyond.ok()) return beyond.error();
  if (taken_ != static_cast<uint64_t>(d.size) || *beyond != 0) {
    return MakeError(ErrorKind::kIntegrity, what + ": the source holds " + (*beyond ? "more" : "fewer") + " than the " +
                                                std::to_string(d.size) + " bytes its descriptor names; not committed");
  }
  oci::Digest got = hash_.Finish();
  if (got != d.digest) {
    return MakeError(ErrorKind::kIntegrity, what + ": content hashes to " + got.str() + "; not committed");
  }
  return Status::Ok();
}

}  // namespace imgtool::remote
