// Blobs as streams. Every source (a layout on disk, an archive, a registry, memory)
// hands out a blob's bytes through Reader, never as a path, so the code above it does not
// care where the bytes live and never holds a layer in memory.
//
// CheckedReader is how outside bytes are trusted: it passes the bytes through while
// counting and hashing them, and ends the stream with kIntegrity when they are more,
// fewer or other than the descriptor says. Nothing should be committed (renamed into
// place, PUT to a registry, used for a decision) before its reader reached the end
// without an error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "oci/digest.h"
#include "oci/result.h"

namespace imgtool::oci {

struct Descriptor;

class Reader {
 public:
  virtual ~Reader() = default;
  // Up to `n` bytes into `buf`; 0 only at the end of the stream.
  virtual Result<size_t> Read(void* buf, size_t n) = 0;
  // Readers whose bytes stay addressable (a file, memory) also read at any offset without
  // moving Read's position: a registry upload sends a range again after a reset.
  virtual bool CanReadAt() const { return false; }
  virtual Result<size_t> ReadAt(uint64_t offset, void* buf, size_t n);
};

// Bytes held in memory (small documents: manifests, configs, signatures).
class StringReader : public Reader {
 public:
  explicit StringReader(std::string bytes) : bytes_(std::move(bytes)) {}
  Result<size_t> Read(void* buf, size_t n) override;
  bool CanReadAt() const override { return true; }
  Result<size_t> ReadAt(uint64_t offset, void* buf, size_t n) override;

 private:
  std::string bytes_;
  size_t pos_ = 0;
};

// Passes `inner`'s bytes through while checking them against `expected_digest` and
// `expected_size`; `name` ("blob sha256:ab12..") starts every error. Reading past the
// size fails at once (a source that never ends cannot hang us); at the end, a short
// stream or another sha256 fails. ReadAt is passed through unchecked (its callers check).
class CheckedReader : public Reader {
 public:
  CheckedReader(std::unique_ptr<Reader> inner, Digest expected_digest, int64_t expected_size, std::string name);
  Result<size_t> Read(void* buf, size_t n) override;
  bool CanReadAt() const override { return inner_->CanReadAt(); }
  Result<size_t> ReadAt(uint64_t offset, void* buf, size_t n) override;
  uint64_t bytes_read() const { return count_; }
  bool finished() const { return finished_; }  // the end was reached and every check passed

 private:
  Error Fail(const std::string& why) const;

  std::unique_ptr<Reader> inner_;
  Digest digest_;
  uint64_t size_;
  std::string name_;
  Sha256 hash_;
  uint64_t count_ = 0;
  bool finished_ = false;
};

// Passes at most `limit` bytes of `inner` through; one more is an error naming `name`.
// For code that checks sizes and digests itself (verify) but must not read forever.
class LimitReader : public Reader {
 public:
  LimitReader(std::unique_ptr<Reader> inner, uint64_t limit, std::string name)
      : inner_(std::move(inner)), left_(limit), limit_(limit), name_(std::move(name)) {}
  Result<size_t> Read(void* buf, size_t n) override;

 private:
  std::unique_ptr<Reader> inner_;
  uint64_t left_, limit_;
  std::string name_;
};

// Reads `r` to its end into a string; more than `max_bytes` is an error naming `what`.
Result<std::string> ReadAll(Reader& r, uint64_t max_bytes, const std::string& what);
// Reads `r` to its end, throwing the bytes away (a CheckedReader then has checked them).
Result<uint64_t> Drain(Reader& r);

}  // namespace imgtool::oci
