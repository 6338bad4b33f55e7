// BufferPipe: a fixed pool of byte buffers passed between one producer thread and one
// consumer thread. It bounds the memory of the layer pipeline (count x capacity bytes,
// whatever the layer size) and lets reading/tar and compression run on two cores.
//
// Buffers cycle: producer TakeEmpty -> fill -> PutFull; consumer TakeFull -> use ->
// PutEmpty. Either side may Cancel(); after that every Take returns nullptr, so a
// failure on one side stops the other promptly instead of deadlocking it.
//
// Internal to imgtool/archive: not part of layer.h.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace imgtool::archive::internal {

class BufferPipe {
 public:
  struct Buffer {
    std::unique_ptr<uint8_t[]> data;
    size_t capacity = 0;
    size_t size = 0;  // bytes in use
  };

  BufferPipe(size_t count, size_t capacity);
  BufferPipe(const BufferPipe&) = delete;
  BufferPipe& operator=(const BufferPipe&) = delete;

  // Producer side. TakeEmpty blocks until a buffer is free; nullptr once cancelled.
  Buffer* TakeEmpty();
  void PutFull(Buffer* b);
  // No more full buffers will come: the consumer's TakeFull returns nullptr once drained.
  void Close();

  // Consumer side. TakeFull blocks; nullptr at the end of the stream or once cancelled.
  Buffer* TakeFull();
  void PutEmpty(Buffer* b);

  void Cancel();
  bool cancelled() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable empty_ready_;
  std::condition_variable full_ready_;
  std::vector<Buffer> storage_;
  std::deque<Buffer*> empty_;
  std::deque<Buffer*> full_;
  bool closed_ = false;
  bool cancelled_ = false;
};

}  // namespace imgtool::archive::internal
