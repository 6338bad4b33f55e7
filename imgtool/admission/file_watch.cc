#include "admission/file_watch.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "fs/atomic_file.h"
#include "oci/digest.h"

namespace imgtool::admission {

Result<FileStamp> StampOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return MakeError(ErrorKind::kNotFound, path + ": " + std::strerror(errno));
  }
  FileStamp s;
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  s.size = st.st_size;
  s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return s;
}

Result<bool> WatchedFile::Changed(std::string* bytes, uint64_t max_bytes) {
  auto stamp = StampOf(path_);
  if (!stamp.ok()) return stamp.error();
  if (seen_ && *stamp == stamp_) return false;
  auto raw = fs::ReadSmallFile(path_, max_bytes);
  if (!raw.ok()) return MakeError(ErrorKind::kInvalidInput, raw.error().message);
  oci::Sha256 h;
  h.Update(*raw);
  std::string sha = h.Finish().str().substr(7);
  // A write in progress may leave the stamp as it was after the bytes change again
  // (same second, same size on a coarse clock): the stamp is taken before the read, so
  // such a change moves it once more and is read then.
  stamp_ = *stamp;
  bool changed = !seen_ || sha != sha256_;
  seen_ = true;
  sha256_ = sha;
  if (changed) *bytes = std::move(*raw);
  return changed;
}

}  // namespace imgtool::admission
