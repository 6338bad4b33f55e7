#include "archive/layer_pipeline.h"

#include <algorithm>
#include <cstring>

namespace imgtool::archive::internal {

std::span<uint8_t> PipeWriter::Room() {
  if (cur_ == nullptr && (cur_ = pipe_.TakeEmpty()) == nullptr) return {};
  return {cur_->data.get() + cur_->size, cur_->capacity - cur_->size};
}

void PipeWriter::Note(size_t offset, size_t len) {
  if (!in_item_ || len == 0) return;
  auto& spans = cur_->spans;
  if (!spans.empty() && spans.back().item == item_ && spans.back().offset + spans.back().size == offset) {
    spans.back().size += static_cast<uint32_t>(len);
  } else {
    spans.push_back({item_, static_cast<uint32_t>(offset), static_cast<uint32_t>(len), false});
  }
}

bool PipeWriter::Append(const void* data, size_t len) {
  const auto* p = static_cast<const uint8_t*>(data);
  if (cur_ != nullptr && p == cur_->data.get() + cur_->size && len <= cur_->capacity - cur_->size) {
    // Filled in place through Room(): already where it belongs.
    Note(cur_->size, len);
    cur_->size += len;
    if (cur_->size == cur_->capacity) Push();
    return true;
  }
  while (len > 0) {
    if (cur_ == nullptr && (cur_ = pipe_.TakeEmpty()) == nullptr) return false;
    size_t n = std::min(len, cur_->capacity - cur_->size);
    std::memcpy(cur_->data.get() + cur_->size, p, n);
    Note(cur_->size, n);
    cur_->size += n;
    p += n;
    len -= n;
    if (cur_->size == cur_->capacity) Push();
  }
  return true;
}

bool PipeWriter::EndItem() {
  in_item_ = false;
  if (cur_ == nullptr && (cur_ = pipe_.TakeEmpty()) == nullptr) return false;
  cur_->spans.push_back({item_, static_cast<uint32_t>(cur_->size), 0, true});
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
  bytes_ += cur_->size;
  pipe_.PutFull(cur_);
  cur_ = nullptr;
}

void HashStage::Run(BufferPipe& in, int consumer) {
  while (BufferPipe::Buffer* b = in.TakeFull(consumer)) {
    // Each file's spans first, then the whole buffer: both passes find it in cache.
    for (const BufferPipe::Span& s : b->spans) {
      file_.Update(b->data.get() + s.offset, s.size);
      if (s.last) status_ = EndFile(s.item);
      if (!status_.ok()) break;
    }
    if (diff_id_ && status_.ok()) sha_.Update(b->data.get(), b->size);
    in.PutEmpty(b);
    if (!status_.ok()) return in.Cancel();
  }
}

Status HashStage::EndFile(uint32_t item) {
  const Entry& e = entries_[item];
  oci::Digest& digest = file_digests_[item];
  digest = file_.Finish();
  if (!e.expect_sha256.empty() && digest != e.expect_sha256) {
    return MakeError(ErrorKind::kIntegrity, e.source + ": changed while building (its content was " +
                                                e.expect_sha256.str() + " when checked, the bytes read are " +
                                                digest.str() + ")");
  }
  return Status::Ok();
}

void RunCompressStage(BufferPipe& in, int consumer, Compressor& compressor, PipeWriter& out_writer, BufferPipe& out,
                      Status* result) {
  auto fail = [&](Status st) {
    *result = std::move(st);
    in.Cancel();
    out.Cancel();
  };
  while (BufferPipe::Buffer* b = in.TakeFull(consumer)) {
    Status st = compressor.Write(b->data.get(), b->size);
    in.PutEmpty(b);
    if (!st.ok()) return fail(st);
  }
  if (in.cancelled()) {
    out.Cancel();  // another stage failed and reports why
    return;
  }
  Status st = compressor.Finish();
  if (!st.ok()) return fail(st);
  out_writer.Finish();
}

void WriteStage::Run(BufferPipe& in, int consumer) {
  while (BufferPipe::Buffer* b = in.TakeFull(consumer)) {
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
