#include "tarball/saved_archive.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "archive/inflate_reader.h"
#include "fs/atomic_file.h"

namespace imgtool::tarball {

namespace {

Error Errno(const std::string& what) { return MakeError(ErrorKind::kInternal, what + ": " + std::strerror(errno)); }

// pread until `n` bytes or the end of the file; the count read.
Result<size_t> PreadFull(int fd, uint64_t offset, char* buf, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t k = ::pread(fd, buf + done, n - done, static_cast<off_t>(offset + done));
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return Errno("reading the archive");
    if (k == 0) break;
    done += static_cast<size_t>(k);
  }
  return done;
}

// The tarball compressed as a whole, inflated into a temporary file nobody else can name
// (unlinked at once, so nothing is left behind however imgtool ends).
Result<fs::UniqueFd> InflateToTemporary(fs::UniqueFd compressed, const std::string& name) {
  auto dir = fs::TempDir::Create("imgtool-docker-archive-");
  if (!dir.ok()) return dir.error();
  std::string path = dir->path() + "/tar";
  fs::UniqueFd out(::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!out) return Errno("creating " + path);
  ::unlink(path.c_str());
  auto in = archive::InflateReader(std::make_unique<fs::FdReader>(std::move(compressed)), name);
  if (!in.ok()) return in.error();
  std::vector<char> buf(1 << 20);
  for (;;) {
    auto got = in->reader->Read(buf.data(), buf.size());
    if (!got.ok()) return got.error();
    if (*got == 0) break;
    for (size_t done = 0; done < *got;) {
      ssize_t k = ::write(out.get(), buf.data() + done, *got - done);
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) return Errno("writing the inflated tarball");
      done += static_cast<size_t>(k);
    }
  }
  return out;
}

// The file as a plain tar: itself, or its inflated copy when it starts with gzip or
// zstd magic.
Result<fs::UniqueFd> PlainTar(fs::UniqueFd fd, const std::string& name) {
  char head[4] = {};
  auto got = PreadFull(fd.get(), 0, head, sizeof head);
  if (!got.ok()) return got.error();
  const auto* h = reinterpret_cast<const unsigned char*>(head);
  bool gzip = *got >= 2 && h[0] == 0x1f && h[1] == 0x8b;
  bool zstd = *got == 4 && h[0] == 0x28 && h[1] == 0xb5 && h[2] == 0x2f && h[3] == 0xfd;
  if (!gzip && !zstd) return fd;
  return InflateToTemporary(std::move(fd), name);
}

Error NoManifest(const TarIndex& index, const std::string& name) {
  if (index.File("repositories", false).ok()) {
    return MakeError(ErrorKind::kInvalidInput, name +
                                                   ": no manifest.json, only a legacy `repositories` file (a docker "
                                                   "save from before Docker 1.10, which imgtool does not read)");
  }
  return MakeError(ErrorKind::kInvalidInput, name + ": no manifest.json: not a docker save tarball");
}

}  // namespace

Result<std::shared_ptr<const SavedArchive>> SavedArchive::Open(const std::string& path, const std::string& name) {
  auto opened = fs::OpenRegular(path);
  if (!opened.ok()) return opened.error().Context(name);
  auto fd = PlainTar(std::move(*opened), name);
  if (!fd.ok()) return fd.error();
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return Errno(name);
  auto archive = std::shared_ptr<SavedArchive>(new SavedArchive());
  archive->name_ = name;
  archive->size_ = static_cast<uint64_t>(st.st_size);
  archive->fd_ = std::move(*fd);
  auto index = TarIndex::Read(archive->fd_.get(), archive->size_, name);
  if (!index.ok()) return index.error();
  archive->index_ = std::move(*index);
  // manifest.json itself must be a file: a symlink there is refused, not resolved.
  auto member = archive->index_.File("manifest.json", /*follow=*/false);
  if (!member.ok()) {
    if (member.error().kind == ErrorKind::kNotFound) return NoManifest(archive->index_, name);
    return member.error();
  }
  auto bytes = archive->ReadMember(*member, kMaxManifestJsonBytes, "manifest.json");
  if (!bytes.ok()) return bytes.error();
  auto images = ParseManifestJson(*bytes);
  if (!images.ok()) return images.error().Context(name);
  archive->images_ = std::move(*images);
  return std::shared_ptr<const SavedArchive>(std::move(archive));
}

Result<std::string> SavedArchive::ReadMember(const TarMember& m, uint64_t max_bytes, const std::string& what) const {
  if (m.size > max_bytes) {
    return MakeError(ErrorKind::kInvalidInput, name_ + ": " + what + " is " + std::to_string(m.size) +
                                                   " bytes, more than the " + std::to_string(max_bytes) + " allowed");
  }
  std::string out(m.size, '\0');
  auto got = PreadFull(fd_.get(), m.offset, out.data(), out.size());
  if (!got.ok()) return got.error().Context(name_);
  if (*got != m.size) return MakeError(ErrorKind::kIntegrity, name_ + ": " + what + " is cut short (truncated?)");
  return out;
}

namespace {

class MemberReader : public oci::Reader {
 public:
  MemberReader(std::shared_ptr<const SavedArchive> archive, int fd, TarMember m)
      : archive_(std::move(archive)), fd_(fd), m_(std::move(m)) {}
  Result<size_t> Read(void* buf, size_t n) override {
    auto got = ReadAt(pos_, buf, n);
    if (got.ok()) pos_ += *got;
    return got;
  }
  bool CanReadAt() const override { return true; }
  Result<size_t> ReadAt(uint64_t offset, void* buf, size_t n) override {
    if (offset >= m_.size) return size_t{0};
    n = static_cast<size_t>(std::min<uint64_t>(n, m_.size - offset));
    auto got = PreadFull(fd_, m_.offset + offset, static_cast<char*>(buf), n);
    if (!got.ok()) return got.error().Context(archive_->name());
    if (*got == 0 && n > 0) return MakeError(ErrorKind::kIntegrity, archive_->name() + ": a member is cut short");
    return got;
  }

 private:
  std::shared_ptr<const SavedArchive> archive_;  // keeps fd_ open
  int fd_;
  TarMember m_;
  uint64_t pos_ = 0;
};

}  // namespace

std::unique_ptr<oci::Reader> OpenMember(std::shared_ptr<const SavedArchive> archive, const TarMember& m) {
  int fd = archive->fd_.get();
  return std::make_unique<MemberReader>(std::move(archive), fd, m);
}

}  // namespace imgtool::tarball
