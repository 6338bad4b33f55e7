#include "fs/file_identity.h"

#include <sstream>

namespace imgtool::fs {

namespace {
int64_t Nanos(const struct timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }
}  // namespace

FileIdentity FileIdentity::Of(const struct stat& st) {
  return FileIdentity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                      static_cast<uint64_t>(st.st_size), Nanos(st.st_mtim), Nanos(st.st_ctim)};
}

std::string FileIdentity::str() const {
  return "dev " + std::to_string(dev) + " ino " + std::to_string(ino) + " size " + std::to_string(size) + " mtime " +
         std::to_string(mtime_ns) + " ctime " + std::to_string(ctime_ns);
}

std::optional<FileIdentity> FileIdentity::Parse(const std::string& text) {
  std::istringstream in(text);
  std::string k[5], extra;
  FileIdentity id;
  if (!(in >> k[0] >> id.dev >> k[1] >> id.ino >> k[2] >> id.size >> k[3] >> id.mtime_ns >> k[4] >> id.ctime_ns) ||
      (in >> extra)) {
    return std::nullopt;
  }
  if (k[0] != "dev" || k[1] != "ino" || k[2] != "size" || k[3] != "mtime" || k[4] != "ctime") return std::nullopt;
  if (id.str() != text) return std::nullopt;  // exactly what str() writes
  return id;
}

}  // namespace imgtool::fs
