#include "fs/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>
#include <cstring>

namespace imgtool::fs {

Result<DirLock> DirLock::Exclusive(const std::string& dir) {
  DirLock lock;
  lock.fd_.Reset(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!lock.fd_) {
    int e = errno;
    return MakeError(e == ENOENT ? ErrorKind::kNotFound : ErrorKind::kInternal,
                     "locking " + dir + ": " + std::strerror(e));
  }
  while (::flock(lock.fd_.get(), LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    // ENOLCK (an NFS mount without a lock daemon): refusing beats losing an update.
    return MakeError(ErrorKind::kInternal, "locking " + dir + ": " + std::strerror(errno));
  }
  return lock;
}

}  // namespace imgtool::fs
