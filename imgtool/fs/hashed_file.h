// Hashing a file by the same reads that use it. A file checked by one open and used by
// another can be swapped in between by anyone who can write its folder (a download
// cache, a spec's folder), and one that others can write can change in place even under
// one open. So a pinned input is opened once and either:
//   - read once, in order, through a HashingReader: the digest is of exactly the bytes
//     the consumer was given (a .deb, unpacked as it streams), or
//   - hashed whole first as a HashedFile, whose bytes then cannot change: a file only we
//     can write is read again through the same descriptor; one that others can write is
//     copied while hashed to an unnamed private file and read from there (a wheel: the
//     zip reader seeks).
// Either way the digest a caller compares with a pin is the digest of what it used.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "fs/safe_open.h"
#include "oci/digest.h"
#include "oci/reader.h"
#include "oci/result.h"

namespace imgtool::fs {

// Passes `inner`'s bytes through in order, hashing each on its way out. Finish() reads
// whatever the consumer left (it may stop before the end) and returns the digest and
// size of the whole stream: what the consumer read is its prefix, hashed as given.
class HashingReader : public oci::Reader {
 public:
  explicit HashingReader(std::unique_ptr<oci::Reader> inner) : inner_(std::move(inner)) {}
  Result<size_t> Read(void* buf, size_t n) override;
  Result<oci::FileDigest> Finish();

 private:
  std::unique_ptr<oci::Reader> inner_;
  oci::Sha256 hash_;
  uint64_t count_ = 0;
};

// A regular file hashed whole, whose bytes Open() then serves unchanged.
class HashedFile {
 public:
  // Reads `fd` (a regular file, opened by the caller without waiting: OpenRegular,
  // OpenRegularBeneath) from its start to its end, hashing. A file others can write
  // (not OnlyWeCanWrite) is copied while hashed to an unnamed file in `spill_dir`
  // (O_TMPFILE; a 0600 name unlinked at once where the filesystem lacks it) that nobody
  // else can open, and read from there. `name` starts every error.
  static Result<std::shared_ptr<const HashedFile>> Hash(UniqueFd fd, const std::string& spill_dir,
                                                        const std::string& name);
  // A file this process has just written while hashing it (a download: `digest`),
  // handed on by its descriptor (AtomicFile::ReadBack). Taken as it is when only we can
  // write it; otherwise hashed again (as Hash does) and refused (kIntegrity) if it
  // changed.
  static Result<std::shared_ptr<const HashedFile>> Written(UniqueFd fd, const oci::FileDigest& digest,
                                                           const std::string& spill_dir, const std::string& name);

  const oci::FileDigest& digest() const { return digest_; }
  // A reader of the hashed bytes: Read from the start; ReadAt anywhere (pread); nothing
  // past the hashed size. Each has its own descriptor (dup), so readers are independent.
  Result<std::unique_ptr<oci::Reader>> Open() const;

 private:
  HashedFile(UniqueFd fd, oci::FileDigest digest) : fd_(std::move(fd)), digest_(std::move(digest)) {}
  UniqueFd fd_;
  oci::FileDigest digest_;
};

}  // namespace imgtool::fs
