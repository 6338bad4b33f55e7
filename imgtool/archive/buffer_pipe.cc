#include "archive/buffer_pipe.h"

namespace imgtool::archive::internal {

BufferPipe::BufferPipe(size_t count, size_t capacity) : storage_(count) {
  for (Buffer& b : storage_) {
    // Not value-initialized: the pages are touched only when used.
    b.data.reset(new uint8_t[capacity]);
    b.capacity = capacity;
    empty_.push_back(&b);
  }
}

BufferPipe::Buffer* BufferPipe::TakeEmpty() {
  std::unique_lock<std::mutex> lock(mu_);
  empty_ready_.wait(lock, [&] { return cancelled_ || !empty_.empty(); });
  if (cancelled_) return nullptr;
  Buffer* b = empty_.front();
  empty_.pop_front();
  b->size = 0;
  return b;
}

void BufferPipe::PutFull(Buffer* b) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    full_.push_back(b);
  }
  full_ready_.notify_one();
}

void BufferPipe::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  full_ready_.notify_all();
}

BufferPipe::Buffer* BufferPipe::TakeFull() {
  std::unique_lock<std::mutex> lock(mu_);
  full_ready_.wait(lock, [&] { return cancelled_ || closed_ || !full_.empty(); });
  if (cancelled_ || full_.empty()) return nullptr;
  Buffer* b = full_.front();
  full_.pop_front();
  return b;
}

void BufferPipe::PutEmpty(Buffer* b) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    empty_.push_back(b);
  }
  empty_ready_.notify_one();
}

void BufferPipe::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  empty_ready_.notify_all();
  full_ready_.notify_all();
}

bool BufferPipe::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

}  // namespace imgtool::archive::internal
