#include "fs/safe_open.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "fs/atomic_file.h"

namespace imgtool::fs {

namespace {

std::string KindOf(mode_t mode) {
  if (S_ISLNK(mode)) return "a symlink";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

Error Refused(const std::string& path, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, path + ": " + why + "; refused (only regular files inside it are read)");
}

Error OpenError(const std::string& path, int err, int dirfd, const std::string& name) {
  if (err == ENOENT) return MakeError(ErrorKind::kNotFound, path + ": No such file or directory");
  // O_NOFOLLOW on a symlink gives ELOOP (or ENOTDIR for a component opened as a folder).
  struct stat st {};
  if ((err == ELOOP || err == ENOTDIR) && ::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    return Refused(path, "is " + KindOf(st.st_mode));
  }
  return MakeError(ErrorKind::kInternal, "opening " + path + ": " + std::strerror(err));
}

std::vector<std::string> Components(const std::string& relative) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t slash; (slash = relative.find('/', start)) != std::string::npos; start = slash + 1) {
    if (slash > start) parts.push_back(relative.substr(start, slash - start));
  }
  if (start < relative.size()) parts.push_back(relative.substr(start));
  return parts;
}

}  // namespace

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

void UniqueFd::Reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

Result<UniqueFd> OpenRegularBeneath(const std::string& root, const std::string& relative, uint64_t* size) {
  const std::string path = root + "/" + relative;
  UniqueFd dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return OpenError(root, errno, AT_FDCWD, root);
  auto parts = Components(relative);
  if (parts.empty()) return MakeError(ErrorKind::kInvalidInput, path + ": no file named");
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i] == "..") return Refused(path, "leaves the folder");
    UniqueFd next(::openat(dir.get(), parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) return OpenError(path, errno, dir.get(), parts[i]);
    dir = std::move(next);
  }
  if (parts.back() == "..") return Refused(path, "leaves the folder");
  UniqueFd fd(::openat(dir.get(), parts.back().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return OpenError(path, errno, dir.get(), parts.back());
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return MakeError(ErrorKind::kInternal, "stat " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return Refused(path, "is " + KindOf(st.st_mode));
  // Regular files never block; clear O_NONBLOCK anyway so reads behave as usual.
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  if (size) *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

Result<UniqueFd> OpenRegular(const std::string& path, uint64_t* size) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    int err = errno;
    return MakeError(err == ENOENT ? ErrorKind::kNotFound : ErrorKind::kInternal,
                     "opening " + path + ": " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return MakeError(ErrorKind::kInternal, "stat " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    return MakeError(ErrorKind::kInvalidInput, "reading " + path + ": " + KindOf(st.st_mode) + ", not a regular file");
  }
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  if (size) *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

Result<UniqueFd> OpenRegularNoFollow(const std::string& path, uint64_t* size) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    int err = errno;
    struct stat st {};
    if (err == ELOOP && ::lstat(path.c_str(), &st) == 0) {
      return MakeError(ErrorKind::kInvalidInput, path + ": is " + KindOf(st.st_mode) + "; refused");
    }
    // ENOTDIR: a folder on the way is a file now; nothing is there either way.
    return MakeError(err == ENOENT || err == ENOTDIR ? ErrorKind::kNotFound : ErrorKind::kInternal,
                     "opening " + path + ": " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return MakeError(ErrorKind::kInternal, "stat " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return MakeError(ErrorKind::kInvalidInput, path + ": is " + KindOf(st.st_mode) + "; refused");
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  if (size) *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

Result<std::string> ReadRegularBeneath(const std::string& root, const std::string& relative, uint64_t max_bytes) {
  uint64_t size = 0;
  auto fd = OpenRegularBeneath(root, relative, &size);
  if (!fd.ok()) return fd.error();
  const std::string path = root + "/" + relative;
  if (size > max_bytes) {
    return MakeError(ErrorKind::kInvalidInput, path + ": larger than " + std::to_string(max_bytes) + " bytes");
  }
  std::string out;
  if (!ReadExactly(fd->get(), &out, static_cast<size_t>(size))) {
    return MakeError(ErrorKind::kInternal, "reading " + path + ": short read");
  }
  return out;
}

Result<size_t> FdReader::Read(void* buf, size_t n) {
  for (;;) {
    ssize_t k = ::read(fd_.get(), buf, n);
    if (k >= 0) return static_cast<size_t>(k);
    if (errno != EINTR) return MakeError(ErrorKind::kInternal, std::string("read: ") + std::strerror(errno));
  }
}

Result<size_t> FdReader::ReadAt(uint64_t offset, void* buf, size_t n) {
  for (;;) {
    ssize_t k = ::pread(fd_.get(), buf, n, static_cast<off_t>(offset));
    if (k >= 0) return static_cast<size_t>(k);
    if (errno != EINTR) return MakeError(ErrorKind::kInternal, std::string("read: ") + std::strerror(errno));
  }
}

}  // namespace imgtool::fs
