// BufferPipe: a fixed pool of byte buffers passed from one producer thread to one or
// more consumer threads. It bounds the memory of the layer pipeline (count x capacity
// bytes, whatever the layer size) and lets reading/tar, hashing and compression run on
// separate cores.
//
// Buffers cycle: producer TakeEmpty -> fill -> PutFull; every consumer TakeFull(k) ->
// use -> PutEmpty. With several consumers each sees every buffer, in order, and a buffer
// is free again once all of them have put it back (fan-out: the tar stream is hashed
// and compressed at the same time, from the same bytes, without a copy). Either side may
// Cancel(); after that every Take returns nullptr, so a failure on one side stops the
// others promptly instead of deadlocking them.
//
// Buffers are 4 KiB aligned, so they can be written with O_DIRECT (layer_pipeline.h).
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

inline constexpr size_t kBufferAlignment = 4096;

class BufferPipe {
 public:
  // A range of a buffer that belongs to item `item` (the layer: entry index of a file
  // whose content lies there). `last`: the item's bytes end here (size may be 0).
  struct Span {
    uint32_t item = 0;
    uint32_t offset = 0;
    uint32_t size = 0;
    bool last = false;
  };
  struct Free {
    void operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t(kBufferAlignment)); }
  };
  struct Buffer {
    std::unique_ptr<uint8_t[], Free> data;
    size_t capacity = 0;
    size_t size = 0;          // bytes in use
    std::vector<Span> spans;  // in stream order; cleared when the buffer is taken empty
    int refs = 0;             // consumers still holding it
  };

  BufferPipe(size_t count, size_t capacity, int consumers = 1);
  BufferPipe(const BufferPipe&) = delete;
  BufferPipe& operator=(const BufferPipe&) = delete;

  // Producer side. TakeEmpty blocks until a buffer is free; nullptr once cancelled.
  Buffer* TakeEmpty();
  void PutFull(Buffer* b);
  // No more full buffers will come: each consumer's TakeFull returns nullptr once drained.
  void Close();

  // Consumer side (consumer 0 .. consumers-1). TakeFull blocks; nullptr at the end of
  // the stream or once cancelled. A consumer must not write to a buffer others read.
  Buffer* TakeFull(int consumer = 0);
  void PutEmpty(Buffer* b);

  void Cancel();
  bool cancelled() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable empty_ready_;
  std::condition_variable full_ready_;
  std::vector<Buffer> storage_;
  std::deque<Buffer*> empty_;
  std::vector<std::deque<Buffer*>> full_;  // one queue per consumer
  bool closed_ = false;
  bool cancelled_ = false;
};

}  // namespace imgtool::archive::internal
