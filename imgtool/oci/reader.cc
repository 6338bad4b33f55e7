#include "oci/reader.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace imgtool::oci {

Result<size_t> Reader::ReadAt(uint64_t, void*, size_t) {
  return MakeError(ErrorKind::kInternal, "this stream cannot be read at an offset");
}

Result<size_t> StringReader::Read(void* buf, size_t n) {
  size_t k = std::min(n, bytes_.size() - pos_);
  std::memcpy(buf, bytes_.data() + pos_, k);
  pos_ += k;
  return k;
}

Result<size_t> StringReader::ReadAt(uint64_t offset, void* buf, size_t n) {
  if (offset >= bytes_.size()) return size_t{0};
  size_t k = std::min<size_t>(n, bytes_.size() - offset);
  std::memcpy(buf, bytes_.data() + offset, k);
  return k;
}

CheckedReader::CheckedReader(std::unique_ptr<Reader> inner, Digest expected_digest, int64_t expected_size,
                             std::string name)
    : inner_(std::move(inner)),
      digest_(std::move(expected_digest)),
      size_(static_cast<uint64_t>(std::max<int64_t>(expected_size, 0))),
      name_(std::move(name)) {}

Error CheckedReader::Fail(const std::string& why) const { return MakeError(ErrorKind::kIntegrity, name_ + ": " + why); }

Result<size_t> CheckedReader::Read(void* buf, size_t n) {
  if (finished_ || n == 0) return size_t{0};
  // Ask for one byte more than remains at most, so an overlong blob shows at once.
  uint64_t remaining = size_ - count_;
  size_t want = static_cast<size_t>(std::min<uint64_t>(n, remaining + 1));
  auto got = inner_->Read(buf, want);
  if (!got.ok()) return got.error().Context(name_);
  if (*got > remaining) {
    return Fail("more than the " + std::to_string(size_) + " bytes its descriptor names");
  }
  if (*got == 0) {
    if (count_ != size_) {
      return Fail("ends after " + std::to_string(count_) + " of the " + std::to_string(size_) +
                  " bytes its descriptor names");
    }
    Digest actual = hash_.Finish();
    if (actual != digest_) return Fail("content hashes to " + actual.str());
    finished_ = true;
    return size_t{0};
  }
  hash_.Update(buf, *got);
  count_ += *got;
  return got;
}

// Unchecked and not capped: the caller checks (a registry upload hashes what it sends,
// and looks one byte past the size to see a source that is longer than it should be).
Result<size_t> CheckedReader::ReadAt(uint64_t offset, void* buf, size_t n) { return inner_->ReadAt(offset, buf, n); }

Result<size_t> LimitReader::Read(void* buf, size_t n) {
  auto got = inner_->Read(buf, static_cast<size_t>(std::min<uint64_t>(n, left_ + 1)));
  if (!got.ok()) return got;
  if (*got > left_) {
    return MakeError(ErrorKind::kIntegrity,
                     name_ + ": more than the " + std::to_string(limit_) + " bytes its descriptor names");
  }
  left_ -= *got;
  return got;
}

Result<std::string> ReadAll(Reader& r, uint64_t max_bytes, const std::string& what) {
  std::string out;
  char buf[64 * 1024];
  for (;;) {
    auto got = r.Read(buf, sizeof buf);
    if (!got.ok()) return got.error();
    if (*got == 0) return out;
    if (out.size() + *got > max_bytes) {
      return MakeError(ErrorKind::kInvalidInput, what + ": larger than " + std::to_string(max_bytes) + " bytes");
    }
    out.append(buf, *got);
  }
}

Result<uint64_t> Drain(Reader& r) {
  std::vector<char> buf(1 << 20);
  uint64_t total = 0;
  for (;;) {
    auto got = r.Read(buf.data(), buf.size());
    if (!got.ok()) return got.error();
    if (*got == 0) return total;
    total += *got;
  }
}

}  // namespace imgtool::oci
