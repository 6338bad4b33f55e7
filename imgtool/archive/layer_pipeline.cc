#include "archive/layer_pipeline.h"

#include <algorithm>
#include <cstring>

namespace imgtool::archive::internal {

std::span<uint8_t> PipeWriter::Room() {
  if (cur_ == nullptr && (cur_ = pipe_.TakeEmpty()) == nullptr) return {};
  return {cur_->data.get() + cur_->size, cur_->capacity - cur_->size};
}

bool PipeWriter::Append(const void* data, size_t len) {
  const auto* p = static_cast<const uint8_t*>(data);
  if (cur_ != nullptr && p == cur_->data.get() + cur_->size && len <= cur_->capacity - cur_->size) {
    // Filled in place through Room(): already where it belongs.
    cur_->size += len;
    if (cur_->size == cur_->capacity) Push();
    return true;
  }
  while (len > 0) {
    if (cur_ == nullptr && (cur_ = pipe_.TakeEmpty()) == nullptr) return false;
    size_t n = std::min(len, cur_->capacity - cur_->size);
    std::memcpy(cur_->data.get() + cur_->size, p, n);
    cur_->size += n;
    p += n;
    len -= n;
    if (cur_->size == cur_->capacity) Push();
  }
  return true;
}

Status PipeWriter::Write(const uint8_t* data, size_t len) {
  if (!Append(data, len)) return MakeError(ErrorKind::kInternal, "layer pipeline stopped");
  return Status::Ok();
}

void PipeWriter::Finish() {
  if (cur_ != nullptr) Push();
  pipe_.Close();
}

void PipeWriter::Push() {
  // Hashing here, right after the copy, reads the buffer while it is still in cache.
  if (hash_) sha_.Update(cur_->data.get(), cur_->size);
  bytes_ += cur_->size;
  pipe_.PutFull(cur_);
  cur_ = nullptr;
}

void RunCompressStage(BufferPipe& in, Compressor& compressor, PipeWriter& out_writer, BufferPipe& out, Status* result) {
  auto fail = [&](Status st) {
    *result = std::move(st);
    in.Cancel();
    out.Cancel();
  };
  while (BufferPipe::Buffer* b = in.TakeFull()) {
    Status st = compressor.Write(b->data.get(), b->size);
    in.PutEmpty(b);
    if (!st.ok()) return fail(st);
  }
  if (in.cancelled()) {
    out.Cancel();  // the producer failed and reports why
    return;
  }
  Status st = compressor.Finish();
  if (!st.ok()) return fail(st);
  out_writer.Finish();
}

void WriteStage::Run(BufferPipe& in) {
  while (BufferPipe::Buffer* b = in.TakeFull()) {
    sha_.Update(b->data.get(), b->size);
    bytes_ += b->size;
    Status st = file_.Write(b->data.get(), b->size);
    in.PutEmpty(b);
    if (!st.ok()) {
      status_ = st;
      in.Cancel();
      return;
    }
  }
}

}  // namespace imgtool::archive::internal
