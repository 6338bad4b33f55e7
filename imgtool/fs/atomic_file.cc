#include "fs/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "fs/safe_open.h"

namespace imgtool::fs {

namespace {
Error Errno(const std::string& what) {
  int e = errno;
  return MakeError(e == ENOENT ? ErrorKind::kNotFound : ErrorKind::kInternal, what + ": " + std::strerror(e));
}

std::string RandomSuffix() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  static const char* kChars = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string s(10, 'x');
  for (char& c : s) c = kChars[rng() % 36];
  return s;
}
}  // namespace

std::string DirName(const std::string& path) {
  auto pos = path.find_last_of('/');
  if (pos == std::string::npos) return ".";
  if (pos == 0) return "/";
  return path.substr(0, pos);
}

std::string BaseName(const std::string& path) {
  auto pos = path.find_last_of('/');
  return pos == std::string::npos ? path : path.substr(pos + 1);
}

std::string UniqueTempPath(const std::string& final_path) {
  return DirName(final_path) + "/.tmp-" + BaseName(final_path) + "-" + RandomSuffix();
}

AtomicFile::~AtomicFile() { Abort(); }

Status AtomicFile::Open(const std::string& final_path, unsigned mode) {
  Abort();
  final_path_ = final_path;
  temp_path_ = UniqueTempPath(final_path);
  fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd_ < 0) {
    Error e = Errno("creating " + temp_path_);
    temp_path_.clear();  // not ours: Abort must not remove it
    return e;
  }
  written_ = 0;
  direct_ = false;
  return Status::Ok();
}

bool AtomicFile::WriteDirect() {
  // The file offset must be aligned too: only from an aligned point on.
  if (fd_ >= 0 && written_ % kDirectAlignment == 0) SetDirect(true);
  return direct_;
}

void AtomicFile::SetDirect(bool on) {
  int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0) return;
  flags = on ? (flags | O_DIRECT) : (flags & ~O_DIRECT);
  if (::fcntl(fd_, F_SETFL, flags) == 0) direct_ = on;
}

// One O_DIRECT write; EINVAL (a filesystem or device that wants another alignment, or
// none at all) turns O_DIRECT off and writes buffered instead.
Status AtomicFile::WriteDirectly(const char* p, size_t len) {
  while (len > 0) {
    ssize_t n = ::write(fd_, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EINVAL) {
      SetDirect(false);
      if (direct_) {
        errno = EINVAL;
        return Errno("writing " + temp_path_);
      }
      return Write(p, len);
    }
    if (n < 0) return Errno("writing " + temp_path_);
    p += n;
    len -= static_cast<size_t>(n);
    written_ += static_cast<uint64_t>(n);
    // A short direct write leaves an unaligned rest: finish it buffered.
    if (len > 0 && (len % kDirectAlignment != 0 || n % static_cast<ssize_t>(kDirectAlignment) != 0)) {
      SetDirect(false);
      return Write(p, len);
    }
  }
  return Status::Ok();
}

Status AtomicFile::Write(const void* data, size_t len) {
  const char* p = static_cast<const char*>(data);
  if (direct_) {
    if (reinterpret_cast<uintptr_t>(p) % kDirectAlignment == 0 && len % kDirectAlignment == 0) {
      return WriteDirectly(p, len);
    }
    SetDirect(false);
    if (direct_) return MakeError(ErrorKind::kInternal, "writing " + temp_path_ + ": cannot leave O_DIRECT");
  }
  while (len > 0) {
    ssize_t n = ::write(fd_, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("writing " + temp_path_);
    }
    p += n;
    len -= static_cast<size_t>(n);
    written_ += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Status AtomicFile::Chmod(unsigned mode) {
  if (fd_ < 0) return MakeError(ErrorKind::kInternal, "chmod of a file that is not open");
  if (::fchmod(fd_, static_cast<mode_t>(mode)) != 0) return Errno("chmod " + temp_path_);
  return Status::Ok();
}

Result<UniqueFd> AtomicFile::ReadBack() const {
  if (fd_ < 0) return MakeError(ErrorKind::kInternal, "reading back a file that is not open");
  const std::string proc = "/proc/self/fd/" + std::to_string(fd_);
  UniqueFd fd(::open(proc.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Errno("reading back " + temp_path_);
  return fd;
}

Status AtomicFile::Commit() { return CommitAs(final_path_); }

Status AtomicFile::CommitAs(const std::string& final_path) {
  if (fd_ < 0) return MakeError(ErrorKind::kInternal, "commit of a file that is not open");
  if (::fsync(fd_) != 0) return Errno("fsync " + temp_path_);
  if (::close(fd_) != 0) {
    fd_ = -1;
    return Errno("closing " + temp_path_);
  }
  fd_ = -1;
  if (::rename(temp_path_.c_str(), final_path.c_str()) != 0) return Errno("renaming to " + final_path);
  temp_path_.clear();
  return FsyncDir(DirName(final_path));
}

void AtomicFile::Abort() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
  }
}

Status LinkAtomic(int fd, const std::string& final_path) {
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  std::string tmp;
  for (int attempt = 0;; ++attempt) {
    tmp = UniqueTempPath(final_path);
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW) == 0) break;
    if (errno != EEXIST || attempt == 3) return Errno("linking " + final_path);
  }
  if (::rename(tmp.c_str(), final_path.c_str()) != 0) {
    Error e = Errno("renaming to " + final_path);
    ::unlink(tmp.c_str());
    return e;
  }
  // When final_path already was this very file, rename(2) succeeds without doing
  // anything and the temporary name is still there.
  ::unlink(tmp.c_str());
  return FsyncDir(DirName(final_path));
}

Status WriteFileAtomic(const std::string& path, std::string_view contents) {
  AtomicFile f;
  IMGTOOL_TRY(f.Open(path));
  IMGTOOL_TRY(f.Write(contents));
  return f.Commit();
}

Result<std::string> ReadSmallFile(const std::string& path, uint64_t max_bytes) {
  uint64_t size = 0;
  auto fd = OpenRegular(path, &size);
  if (!fd.ok()) return fd.error();
  if (size > max_bytes) {
    return MakeError(ErrorKind::kInvalidInput,
                     "reading " + path + ": larger than " + std::to_string(max_bytes) + " bytes");
  }
  std::string out;
  if (!ReadExactly(fd->get(), &out, static_cast<size_t>(size))) {
    return MakeError(ErrorKind::kInternal, "reading " + path + ": short read");
  }
  return out;
}

bool ReadExactly(int fd, std::string* out, size_t size) {
  out->resize(size);
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::read(fd, out->data() + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  return got == size;
}

Status FsyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("opening folder " + dir);
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Errno("fsync folder " + dir);
  return Status::Ok();
}

Status MakeDirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return MakeError(ErrorKind::kInternal, "creating folder " + dir + ": " + ec.message());
  return Status::Ok();
}

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

Status RemoveTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) return MakeError(ErrorKind::kInternal, "removing " + path + ": " + ec.message());
  return Status::Ok();
}

}  // namespace imgtool::fs

namespace imgtool::fs {

TempDir::~TempDir() {
  if (!path_.empty()) (void)RemoveTree(path_);
}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    if (!path_.empty()) (void)RemoveTree(path_);
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

Result<TempDir> TempDir::Create(const std::string& prefix, const std::string& parent) {
  std::string base = parent;
  if (base.empty()) {
    const char* t = std::getenv("TMPDIR");
    base = (t && *t) ? t : "/tmp";
  }
  std::string tmpl = base + "/" + prefix + "XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return Errno("creating temporary folder in " + base);
  TempDir d;
  d.path_ = tmpl;
  return d;
}

}  // namespace imgtool::fs
