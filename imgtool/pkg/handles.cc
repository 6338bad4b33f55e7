#include "pkg/handles.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>

#include "oci/hex.h"
#include "oci/quote.h"

namespace imgtool::pkg::internal {

Md5::Md5() : ctx_(EVP_MD_CTX_new()) {
  // Only allocation can fail here, and the default provider always has MD5; a failure
  // shows up as a wrong digest, which every caller compares against something.
  if (ctx_) EVP_DigestInit_ex(ctx_.get(), EVP_md5(), nullptr);
}

void Md5::Update(const void* data, size_t len) {
  if (ctx_) EVP_DigestUpdate(ctx_.get(), data, len);
}

std::string Md5::FinishHex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> raw{};
  unsigned int n = 0;
  if (ctx_) EVP_DigestFinal_ex(ctx_.get(), raw.data(), &n);
  return oci::HexEncode(std::string_view(reinterpret_cast<const char*>(raw.data()), n));
}

int ArchiveSource::OpenOn(struct archive* a) {
  archive_read_set_callback_data(a, this);
  archive_read_set_read_callback(a, &ArchiveSource::ReadCb);
  if (size_) {
    archive_read_set_seek_callback(a, &ArchiveSource::SeekCb);
    archive_read_set_skip_callback(a, &ArchiveSource::SkipCb);
  }
  return archive_read_open1(a);
}

la_ssize_t ArchiveSource::ReadCb(struct archive* a, void* ctx, const void** out) {
  auto* s = static_cast<ArchiveSource*>(ctx);
  *out = s->buf_.data();
  auto got =
      s->size_ ? s->in_.ReadAt(s->pos_, s->buf_.data(), s->buf_.size()) : s->in_.Read(s->buf_.data(), s->buf_.size());
  if (!got.ok()) {
    s->read_error_ = got.error();
    archive_set_error(a, EIO, "%s", got.error().message.c_str());
    return -1;
  }
  s->pos_ += *got;
  return static_cast<la_ssize_t>(*got);
}

la_int64_t ArchiveSource::SeekCb(struct archive* /*a*/, void* ctx, la_int64_t offset, int whence) {
  auto* s = static_cast<ArchiveSource*>(ctx);
  int64_t base = whence == SEEK_SET   ? 0
                 : whence == SEEK_CUR ? static_cast<int64_t>(s->pos_)
                                      : static_cast<int64_t>(*s->size_);
  int64_t to = base + offset;
  if (to < 0) return ARCHIVE_FATAL;
  s->pos_ = static_cast<uint64_t>(to);
  return to;
}

la_int64_t ArchiveSource::SkipCb(struct archive* /*a*/, void* ctx, la_int64_t request) {
  auto* s = static_cast<ArchiveSource*>(ctx);
  if (request <= 0) return 0;
  uint64_t room = *s->size_ > s->pos_ ? *s->size_ - s->pos_ : 0;
  uint64_t skip = std::min<uint64_t>(static_cast<uint64_t>(request), room);
  s->pos_ += skip;
  return static_cast<la_int64_t>(skip);
}

std::string Quote(std::string_view s) { return oci::Quoted(s); }

std::string ArchiveError(struct archive* a, const char* fallback) {
  const char* msg = archive_error_string(a);
  return msg != nullptr ? msg : fallback;
}

}  // namespace imgtool::pkg::internal
