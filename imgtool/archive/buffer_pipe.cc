#include "archive/buffer_pipe.h"

#include <new>

namespace imgtool::archive::internal {

BufferPipe::BufferPipe(size_t count, size_t capacity, int consumers)
    : storage_(count), full_(static_cast<size_t>(consumers)) {
  for (Buffer& b : storage_) {
    // Not value-initialized: the pages are touched only when used.
    b.data.reset(new (std::align_val_t(kBufferAlignment)) uint8_t[capacity]);
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
  b->spans.clear();
  return b;
}

void BufferPipe::PutFull(Buffer* b) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    b->refs = static_cast<int>(full_.size());
    for (auto& queue : full_) queue.push_back(b);
  }
  full_ready_.notify_all();
}

void BufferPipe::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  full_ready_.notify_all();
}

BufferPipe::Buffer* BufferPipe::TakeFull(int consumer) {
  std::unique_lock<std::mutex> lock(mu_);
  auto& queue = full_[static_cast<size_t>(consumer)];
  full_ready_.wait(lock, [&] { return cancelled_ || closed_ || !queue.empty(); });
  if (cancelled_ || queue.empty()) return nullptr;
  Buffer* b = queue.front();
  queue.pop_front();
  return b;
}

void BufferPipe::PutEmpty(Buffer* b) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (--b->refs > 0) return;
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
