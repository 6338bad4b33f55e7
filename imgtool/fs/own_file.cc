#include "fs/own_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fs/atomic_file.h"
#include "fs/safe_open.h"

namespace imgtool::fs {

namespace {

Error ErrnoError(const std::string& what, int e) {
  return MakeError(e == ENOENT ? ErrorKind::kNotFound : ErrorKind::kInternal, what + ": " + std::strerror(e));
}

// Why a file or folder with this stat cannot be trusted; empty when it can.
std::string Untrusted(const struct stat& st) {
  if (st.st_uid != ::geteuid()) return "owned by uid " + std::to_string(st.st_uid) + ", not by us";
  if ((st.st_mode & 022) != 0) return "writable by group or others";
  return "";
}

// The bytes of an open file once it passed the checks; kDenied naming why not.
Result<std::string> ReadIfOurs(int fd, const std::string& path, uint64_t max_bytes) {
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) {
    why = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = "not a regular file";
  } else if (why = Untrusted(st); why.empty() && static_cast<uint64_t>(st.st_size) > max_bytes) {
    why = "larger than " + std::to_string(max_bytes) + " bytes";
  }
  std::string text;
  if (why.empty() && !ReadExactly(fd, &text, static_cast<size_t>(st.st_size))) why = "short read";
  if (!why.empty()) return MakeError(ErrorKind::kDenied, path + ": " + why);
  return text;
}

}  // namespace

bool OnlyWeCanWrite(const struct stat& st) { return S_ISREG(st.st_mode) && Untrusted(st).empty(); }

Result<std::string> ReadOwnFile(const std::string& path, uint64_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) {
    if (errno == ELOOP) return MakeError(ErrorKind::kDenied, path + ": a symlink");
    return ErrnoError("opening " + path, errno);
  }
  return ReadIfOurs(fd.get(), path, max_bytes);
}

Result<std::string> ReadOwnFileBeneath(const std::string& root, const std::string& relative, uint64_t max_bytes) {
  auto fd = OpenRegularBeneath(root, relative);
  if (!fd.ok()) {
    if (fd.error().kind == ErrorKind::kNotFound) return fd.error();
    return MakeError(ErrorKind::kDenied, fd.error().message);
  }
  return ReadIfOurs(fd->get(), root + "/" + relative, max_bytes);
}

Status CheckOwnDir(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return ErrnoError("stat " + dir, errno);
  if (!S_ISDIR(st.st_mode)) return MakeError(ErrorKind::kDenied, dir + ": not a folder");
  if (auto why = Untrusted(st); !why.empty()) return MakeError(ErrorKind::kDenied, dir + ": " + why);
  return Status::Ok();
}

Status MakeOwnDir(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    IMGTOOL_TRY(MakeDirs(dir));
    // Through a descriptor of the folder itself: a symlink put there meanwhile is refused.
    UniqueFd made(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!made || ::fchmod(made.get(), 0755) != 0) return ErrnoError("chmod " + dir, errno);
  }
  return CheckOwnDir(dir);
}

Status WriteOwnFile(const std::string& path, std::string_view contents) {
  AtomicFile f;
  IMGTOOL_TRY(f.Open(path));
  IMGTOOL_TRY(f.Write(contents));
  IMGTOOL_TRY(f.Chmod(0644));
  return f.Commit();
}

}  // namespace imgtool::fs
