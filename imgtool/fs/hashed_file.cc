#include "fs/hashed_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fs/atomic_file.h"
#include "fs/own_file.h"

namespace imgtool::fs {

namespace {

constexpr size_t kChunk = 1 << 20;

Error Errno(const std::string& what) { return MakeError(ErrorKind::kInternal, what + ": " + std::strerror(errno)); }

Result<size_t> PreadSome(int fd, uint64_t offset, void* buf, size_t n, const std::string& name) {
  for (;;) {
    ssize_t k = ::pread(fd, buf, n, static_cast<off_t>(offset));
    if (k >= 0) return static_cast<size_t>(k);
    if (errno != EINTR) return Errno("reading " + name);
  }
}

Status WriteAll(int fd, const char* p, size_t n, const std::string& what) {
  while (n > 0) {
    ssize_t k = ::write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return Errno("writing " + what);
    p += k;
    n -= static_cast<size_t>(k);
  }
  return Status::Ok();
}

// An unnamed file only this process holds: O_TMPFILE, or where the filesystem lacks it a
// 0600 file created exclusively and unlinked at once.
Result<UniqueFd> PrivateSpill(std::string dir) {
  if (dir.empty()) {
    const char* t = std::getenv("TMPDIR");
    dir = t != nullptr && *t != '\0' ? t : "/tmp";
  }
  UniqueFd fd(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (fd) return fd;
  const std::string path = UniqueTempPath(dir + "/spill");
  fd.Reset(::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return Errno("creating a private copy in " + dir);
  ::unlink(path.c_str());
  return fd;
}

// Reads the first `size` bytes of a file through its own descriptor.
class BoundedFdReader : public oci::Reader {
 public:
  BoundedFdReader(UniqueFd fd, uint64_t size) : fd_(std::move(fd)), size_(size) {}
  Result<size_t> Read(void* buf, size_t n) override {
    auto got = ReadAt(pos_, buf, n);
    if (got.ok()) pos_ += *got;
    return got;
  }
  bool CanReadAt() const override { return true; }
  Result<size_t> ReadAt(uint64_t offset, void* buf, size_t n) override {
    if (offset >= size_) return size_t{0};
    return PreadSome(fd_.get(), offset, buf, static_cast<size_t>(std::min<uint64_t>(n, size_ - offset)), "a file");
  }

 private:
  UniqueFd fd_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

}  // namespace

Result<size_t> HashingReader::Read(void* buf, size_t n) {
  auto got = inner_->Read(buf, n);
  if (!got.ok()) return got;
  hash_.Update(buf, *got);
  count_ += *got;
  return got;
}

Result<oci::FileDigest> HashingReader::Finish() {
  auto rest = oci::Drain(*this);
  if (!rest.ok()) return rest.error();
  return oci::FileDigest{hash_.Finish(), count_};
}

Result<std::shared_ptr<const HashedFile>> HashedFile::Hash(UniqueFd fd, const std::string& spill_dir,
                                                           const std::string& name) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Errno("stat " + name);
  if (!S_ISREG(st.st_mode)) return MakeError(ErrorKind::kInvalidInput, name + ": not a regular file");
  UniqueFd spill;
  if (!OnlyWeCanWrite(st)) {
    auto made = PrivateSpill(spill_dir);
    if (!made.ok()) return made.error();
    spill = std::move(*made);
  }
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  oci::Sha256 hash;
  std::vector<char> buf(kChunk);
  for (uint64_t offset = 0;;) {
    auto got = PreadSome(fd.get(), offset, buf.data(), buf.size(), name);
    if (!got.ok()) return got.error();
    if (*got == 0) break;
    hash.Update(buf.data(), *got);
    if (spill) IMGTOOL_TRY(WriteAll(spill.get(), buf.data(), *got, "a private copy of " + name));
    offset += *got;
  }
  uint64_t size = hash.bytes();
  oci::FileDigest digest{hash.Finish(), size};
  return std::shared_ptr<const HashedFile>(new HashedFile(spill ? std::move(spill) : std::move(fd), digest));
}

Result<std::shared_ptr<const HashedFile>> HashedFile::Written(UniqueFd fd, const oci::FileDigest& digest,
                                                              const std::string& spill_dir, const std::string& name) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Errno("stat " + name);
  if (OnlyWeCanWrite(st) && static_cast<uint64_t>(st.st_size) == digest.size) {
    return std::shared_ptr<const HashedFile>(new HashedFile(std::move(fd), digest));
  }
  auto again = Hash(std::move(fd), spill_dir, name);
  if (!again.ok()) return again.error();
  if ((*again)->digest().digest != digest.digest) {
    return MakeError(ErrorKind::kIntegrity, name + ": changed after it was written (" + digest.digest.str() + ", now " +
                                                (*again)->digest().digest.str() + ")");
  }
  return again;
}

Result<std::unique_ptr<oci::Reader>> HashedFile::Open() const {
  UniqueFd own(::fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0));
  if (!own) return Errno("dup");
  return std::unique_ptr<oci::Reader>(std::make_unique<BoundedFdReader>(std::move(own), digest_.size));
}

}  // namespace imgtool::fs
