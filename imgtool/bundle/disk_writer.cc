#include "bundle/disk_writer.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace imgtool::bundle {

namespace {

using archive::HeaderType;
using rootfs::Placement;

Error Errno(const std::string& what) { return MakeError(ErrorKind::kInternal, what + ": " + std::strerror(errno)); }

std::string Join(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

struct timespec Time(int64_t sec, int32_t nsec) {
  struct timespec t {};
  t.tv_sec = static_cast<time_t>(sec);
  t.tv_nsec = nsec;
  return t;
}

// The names in a folder opened as `fd` (the descriptor is duplicated: closedir closes its own).
Result<std::vector<std::string>> ListDir(int fd) {
  int copy = ::dup(fd);
  if (copy < 0) return Errno("dup");
  DIR* d = ::fdopendir(copy);
  if (d == nullptr) {
    ::close(copy);
    return Errno("fdopendir");
  }
  ::rewinddir(d);
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
  }
  ::closedir(d);
  return names;
}

}  // namespace

Status RemoveAt(int dirfd, const std::string& name) {
  struct stat st {};
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? Status::Ok() : Status(Errno("stat \"" + name + "\""));
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(dirfd, name.c_str(), 0) != 0 && errno != ENOENT) return Errno("removing \"" + name + "\"");
    return Status::Ok();
  }
  if ((st.st_mode & 0700) != 0700) (void)::fchmodat(dirfd, name.c_str(), 0700, 0);  // a real folder: seen above
  int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Errno("opening \"" + name + "\"");
  fs::UniqueFd dir(fd);
  auto names = ListDir(dir.get());
  if (!names.ok()) return names.error();
  for (const auto& n : *names) IMGTOOL_TRY(RemoveAt(dir.get(), n));
  if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return Errno("removing \"" + name + "\"");
  }
  return Status::Ok();
}

Result<fs::UniqueFd> DiskWriter::OpenDir(const std::string& dir, bool create) {
  if (cached_fd_ && dir == cached_path_) {
    int fd = ::dup(cached_fd_.get());
    if (fd < 0) return Errno("dup");
    return fs::UniqueFd(fd);
  }
  fs::UniqueFd cur(::dup(root_.get()));
  if (!cur) return Errno("dup");
  std::string path;
  size_t start = 0;
  while (start < dir.size()) {
    size_t slash = dir.find('/', start);
    if (slash == std::string::npos) slash = dir.size();
    const std::string name = dir.substr(start, slash - start);
    start = slash + 1;
    path = Join(path, name);
    int fd = ::openat(cur.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
      // A folder made as a parent, as an unpacker's mkdir -p makes it (0755, the unpacking user).
      if (::mkdirat(cur.get(), name.c_str(), 0700) != 0) return Errno("making \"" + path + "\"");
      dirs_[path] = DirMeta{};
      fd = ::openat(cur.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
      if (errno == ELOOP || errno == ENOTDIR) {
        return MakeError(ErrorKind::kInternal, "\"" + path + "\" is not a folder on disk, though the tree has one");
      }
      return Errno("opening \"" + path + "\"");
    }
    cur.Reset(fd);
  }
  cached_path_ = dir;
  cached_fd_.Reset(::dup(cur.get()));
  return cur;
}

void DiskWriter::Forget(const std::string& path) {
  cached_fd_.Reset();
  cached_path_.clear();
  dirs_.erase(path);
  const std::string below = path.empty() ? "" : path + "/";
  for (auto it = dirs_.lower_bound(below); it != dirs_.end() && it->first.compare(0, below.size(), below) == 0;) {
    it = dirs_.erase(it);
  }
}

Status DiskWriter::Write(const Placement& placed, const archive::TarHeader& h, const archive::ReadContent& read,
                         const rootfs::Applier& merged) {
  if (placed.kind == Placement::Kind::kSkip) return Status::Ok();
  auto parent = OpenDir(placed.dir, /*create=*/true);
  if (!parent.ok()) return parent.error();
  switch (placed.kind) {
    case Placement::Kind::kSkip:
      return Status::Ok();
    case Placement::Kind::kRemove:
      Forget(placed.path());
      return RemoveAt(parent->get(), placed.name);
    case Placement::Kind::kOpaque:
      return KeepOnly(parent->get(), placed.dir, merged);
    case Placement::Kind::kDirMetadata: {
      DirMeta& m = dirs_[placed.path()];
      m = DirMeta{h.mode, h.uid, h.gid, true, true, h.mtime, h.mtime_nsec};
      return Status::Ok();
    }
    case Placement::Kind::kCreate:
      break;
  }
  Forget(placed.path());
  IMGTOOL_TRY(RemoveAt(parent->get(), placed.name));
  return Create(parent->get(), placed, h, read);
}

Status DiskWriter::KeepOnly(int dirfd, const std::string& path, const rootfs::Applier& merged) {
  auto names = ListDir(dirfd);
  if (!names.ok()) return names.error();
  for (const auto& n : *names) {
    const std::string p = Join(path, n);
    if (!merged.InMerged(p)) {
      Forget(p);
      IMGTOOL_TRY(RemoveAt(dirfd, n));
      continue;
    }
    int fd = ::openat(dirfd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;  // not a folder: nothing below it
    fs::UniqueFd sub(fd);
    IMGTOOL_TRY(KeepOnly(sub.get(), p, merged));
  }
  return Status::Ok();
}

Status DiskWriter::Create(int parent, const Placement& placed, const archive::TarHeader& h,
                          const archive::ReadContent& read) {
  const std::string& name = placed.name;
  switch (h.type) {
    case HeaderType::kDir:
      if (::mkdirat(parent, name.c_str(), 0700) != 0) return Errno("making folder");
      dirs_[placed.path()] = DirMeta{h.mode, h.uid, h.gid, true, true, h.mtime, h.mtime_nsec};
      if (!h.xattrs.empty()) {
        fs::UniqueFd d(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!d) return Errno("opening folder");
        IMGTOOL_TRY(Xattrs(d.get(), h));
      }
      return Status::Ok();
    case HeaderType::kFile:
      return WriteFile(parent, name, h, read);
    case HeaderType::kSymlink:
      if (::symlinkat(h.link.c_str(), parent, name.c_str()) != 0) return Errno("making symlink");
      return Metadata(parent, name, h, /*symlink=*/true);
    case HeaderType::kHardlink:
      return Hardlink(parent, placed, h);
    case HeaderType::kOther:
      return Special(parent, name, h);
  }
  return Status::Ok();
}

Status DiskWriter::WriteFile(int parent, const std::string& name, const archive::TarHeader& h,
                             const archive::ReadContent& read) {
  int fd = ::openat(parent, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("creating file");
  fs::UniqueFd file(fd);
  IMGTOOL_TRY(read([&](uint64_t offset, const void* data, size_t size) -> Status {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      ssize_t n = ::pwrite(file.get(), p, size, static_cast<off_t>(offset));
      if (n < 0) {
        if (errno == EINTR) continue;
        return Errno("writing file");
      }
      p += n;
      offset += static_cast<uint64_t>(n);
      size -= static_cast<size_t>(n);
      stats_.bytes += static_cast<uint64_t>(n);
    }
    return Status::Ok();
  }));
  // A sparse file's trailing hole: the size is the header's.
  if (::ftruncate(file.get(), static_cast<off_t>(h.size)) != 0) return Errno("sizing file");
  if (options_.chown && ::fchown(file.get(), h.uid, h.gid) != 0) return Errno("chown");
  if (::fchmod(file.get(), h.mode) != 0) return Errno("chmod");  // after chown, which clears setuid
  IMGTOOL_TRY(Xattrs(file.get(), h));
  struct timespec times[2] = {Time(h.mtime, h.mtime_nsec), Time(h.mtime, h.mtime_nsec)};
  if (::futimens(file.get(), times) != 0) return Errno("setting times");
  return Status::Ok();
}

Status DiskWriter::Hardlink(int parent, const Placement& placed, const archive::TarHeader& h) {
  const size_t slash = placed.link_path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : placed.link_path.substr(0, slash);
  const std::string base = slash == std::string::npos ? placed.link_path : placed.link_path.substr(slash + 1);
  auto from = OpenDir(dir, /*create=*/false);
  if (!from.ok()) return from.error();
  if (::linkat(from->get(), base.c_str(), parent, placed.name.c_str(), 0) != 0) return Errno("making hardlink");
  struct stat st {};
  if (::fstatat(parent, placed.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Errno("stat hardlink");
  // One inode: the header's mode applies to both names (containerd's chmod after link);
  // a symlink's mode stays.
  if (S_ISLNK(st.st_mode)) return Status::Ok();
  if (::fchmodat(parent, placed.name.c_str(), h.mode, 0) != 0) return Errno("chmod hardlink");
  return Status::Ok();
}

Status DiskWriter::Special(int parent, const std::string& name, const archive::TarHeader& h) {
  // runc makes /dev itself; a device node in a layer is never what a training image
  // needs, and as non-root it cannot be made (umoci --rootless skips it). Refused.
  if (h.special != S_IFIFO) {
    const char* what = h.special == S_IFCHR   ? "a character device"
                       : h.special == S_IFBLK ? "a block device"
                                              : "a socket";
    return MakeError(ErrorKind::kInvalidInput, std::string(what) + ": unpack makes no device nodes or sockets");
  }
  if (::mkfifoat(parent, name.c_str(), 0600) != 0) return Errno("making FIFO");
  return Metadata(parent, name, h, /*symlink=*/false);
}

Status DiskWriter::Metadata(int parent, const std::string& name, const archive::TarHeader& h, bool symlink) {
  if (options_.chown && ::fchownat(parent, name.c_str(), h.uid, h.gid, AT_SYMLINK_NOFOLLOW) != 0) {
    return Errno("chown");
  }
  // A FIFO we just made (never a symlink here: fchmodat would follow one).
  if (!symlink && ::fchmodat(parent, name.c_str(), h.mode, 0) != 0) return Errno("chmod");
  struct timespec times[2] = {Time(h.mtime, h.mtime_nsec), Time(h.mtime, h.mtime_nsec)};
  if (::utimensat(parent, name.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) return Errno("setting times");
  return Status::Ok();
}

Status DiskWriter::Xattrs(int fd, const archive::TarHeader& h) {
  for (const auto& [name, value] : h.xattrs) {
    if (::fsetxattr(fd, name.c_str(), value.data(), value.size(), 0) == 0) continue;
    // As umoci does rootless: what the kernel or the filesystem will not take is skipped.
    if (!options_.chown && (errno == EPERM || errno == ENOTSUP || errno == EACCES)) {
      ++stats_.xattrs_skipped;
      continue;
    }
    return Errno("setting xattr \"" + name + "\"");
  }
  return Status::Ok();
}

Status DiskWriter::Finish() {
  cached_fd_.Reset();
  cached_path_.clear();
  // Deepest first: a folder's own metadata never changes its parent's times, and a
  // read-only parent is set after its children are done.
  for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) {
    const size_t slash = it->first.rfind('/');
    auto parent = OpenDir(slash == std::string::npos ? "" : it->first.substr(0, slash), /*create=*/false);
    if (!parent.ok()) return parent.error();
    const std::string name = slash == std::string::npos ? it->first : it->first.substr(slash + 1);
    fs::UniqueFd d(::openat(parent->get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!d) return Errno("opening \"" + it->first + "\"");
    const DirMeta& m = it->second;
    if (options_.chown && m.has_owner && ::fchown(d.get(), m.uid, m.gid) != 0) return Errno("chown");
    if (::fchmod(d.get(), m.mode) != 0) return Errno("chmod \"" + it->first + "\"");
    if (m.has_time) {
      struct timespec times[2] = {Time(m.mtime, m.mtime_nsec), Time(m.mtime, m.mtime_nsec)};
      if (::futimens(d.get(), times) != 0) return Errno("setting times");
    }
  }
  cached_fd_.Reset();
  cached_path_.clear();
  return Status::Ok();
}

}  // namespace imgtool::bundle
