#include "pkg/safe_extract.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace imgtool::pkg::internal {

namespace {

Error Invalid(const std::string& path, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, "entry " + Quote(path) + ": " + why);
}

Error Sys(const std::string& what) {
  int e = errno;
  return MakeError(ErrorKind::kInternal, what + ": " + std::strerror(e));
}

std::string ParentOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

}  // namespace

std::string PathProblem(std::string_view path) {
  if (path.empty()) return "empty path";
  if (path.find('\0') != std::string_view::npos) return "NUL byte in path";
  if (path.front() == '/') return "absolute path";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part.empty()) return "empty path component";
    if (part == ".") return "\".\" path component";
    if (part == "..") return "\"..\" path component";
    start = end + 1;
  }
  return "";
}

Result<std::string> NormalizeEntryPath(std::string_view raw) {
  std::string_view p = raw;
  // Only the "./" tar puts in front; "/x" and ".//x" stay absolute and are refused below.
  if (p.substr(0, 2) == "./") p.remove_prefix(2);
  if (p.empty() || p == ".") return std::string();
  if (p.back() == '/') p.remove_suffix(1);
  if (std::string why = PathProblem(p); !why.empty()) return Invalid(std::string(raw), why);
  return std::string(p);
}

Result<StagingTree> StagingTree::Open(const std::string& root, bool implicit_parents) {
  StagingTree t;
  t.root_ = root;
  t.implicit_parents_ = implicit_parents;
  t.root_fd_ = UniqueFd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!t.root_fd_.valid()) {
    bool missing = errno == ENOENT;
    Error err = Sys("staging folder " + root);
    if (missing) err.kind = ErrorKind::kNotFound;
    return err;
  }
  // fdopendir takes ownership of the descriptor it is given: hand it a duplicate.
  int dup_fd = ::fcntl(t.root_fd_.get(), F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) return Sys("staging folder " + root);
  DIR* dir = ::fdopendir(dup_fd);
  if (dir == nullptr) {
    ::close(dup_fd);
    return Sys("staging folder " + root);
  }
  bool empty = true;
  while (dirent* e = ::readdir(dir)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) empty = false;
  }
  ::closedir(dir);
  // Unpacking over existing files would mix in bytes no package shipped.
  if (!empty) return MakeError(ErrorKind::kInvalidInput, "staging folder " + root + " is not empty");
  return t;
}

Result<UniqueFd> StagingTree::OpenDirNoFollow(const std::string& path) const {
  UniqueFd cur(::openat(root_fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!cur.valid()) return Sys("opening " + root_);
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    UniqueFd next(::openat(cur.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) return Sys("opening " + root_ + "/" + path.substr(0, end));
    cur = std::move(next);
    start = end + 1;
  }
  return cur;
}

Result<UniqueFd> StagingTree::PrepareParent(const std::string& path, std::string* name) {
  if (std::string why = PathProblem(path); !why.empty()) return Invalid(path, why);
  if (kinds_.count(path) != 0) {
    if (implicit_dirs_.count(path) == 0) return Invalid(path, "duplicate entry");
  }
  std::string parent = ParentOf(path);
  *name = path.substr(parent.empty() ? 0 : parent.size() + 1);
  // Every ancestor must be a folder this tree made; create missing ones only when allowed.
  size_t start = 0;
  while (!parent.empty() && start <= parent.size()) {
    size_t end = parent.find('/', start);
    if (end == std::string::npos) end = parent.size();
    std::string prefix = parent.substr(0, end);
    auto it = kinds_.find(prefix);
    if (it == kinds_.end()) {
      if (!implicit_parents_) return Invalid(path, "parent folder " + Quote(prefix) + " is not in the package");
      IMGTOOL_TRY(AddDir(prefix, 0755));
      implicit_dirs_[prefix] = dir_modes_.size() - 1;
    } else if (it->second == Kind::kSymlink) {
      return Invalid(path, "would be written through the symlink " + Quote(prefix));
    } else if (it->second != Kind::kDir) {
      return Invalid(path, "parent " + Quote(prefix) + " is not a folder");
    }
    start = end + 1;
  }
  if (!cached_parent_fd_.valid() || cached_parent_ != parent) {
    auto fd = OpenDirNoFollow(parent);
    if (!fd.ok()) return fd.error();
    cached_parent_fd_ = std::move(*fd);
    cached_parent_ = parent;
  }
  int dup_fd = ::fcntl(cached_parent_fd_.get(), F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) return Sys("opening " + root_ + "/" + parent);
  return UniqueFd(dup_fd);
}

Status StagingTree::AddDir(const std::string& path, uint32_t mode) {
  if (auto it = implicit_dirs_.find(path); it != implicit_dirs_.end() && kinds_.count(path) != 0) {
    // A zip names a folder after files inside it: take its mode, once.
    dir_modes_[it->second].second = mode;
    implicit_dirs_.erase(it);
    return Status::Ok();
  }
  std::string name;
  auto parent = PrepareParent(path, &name);
  if (!parent.ok()) return parent.error();
  if (::mkdirat(parent->get(), name.c_str(), 0700) != 0) return Sys("creating " + root_ + "/" + path);
  kinds_[path] = Kind::kDir;
  dir_modes_.emplace_back(path, mode);
  return Status::Ok();
}

Result<UniqueFd> StagingTree::CreateFile(const std::string& path) {
  std::string name;
  auto parent = PrepareParent(path, &name);
  if (!parent.ok()) return parent.error();
  if (implicit_dirs_.count(path) != 0) return Invalid(path, "duplicate entry (already a folder)");
  UniqueFd fd(::openat(parent->get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return Sys("creating " + root_ + "/" + path);
  kinds_[path] = Kind::kFile;
  return fd;
}

Status StagingTree::AddSymlink(const std::string& path, const std::string& target) {
  if (target.empty()) return Invalid(path, "symlink with an empty target");
  std::string name;
  auto parent = PrepareParent(path, &name);
  if (!parent.ok()) return parent.error();
  if (implicit_dirs_.count(path) != 0) return Invalid(path, "duplicate entry (already a folder)");
  // The target is stored as text and never followed: it may point anywhere in the image.
  if (::symlinkat(target.c_str(), parent->get(), name.c_str()) != 0) return Sys("creating " + root_ + "/" + path);
  kinds_[path] = Kind::kSymlink;
  return Status::Ok();
}

Status StagingTree::AddHardlink(const std::string& path, const std::string& target) {
  auto it = kinds_.find(target);
  if (it == kinds_.end() || it->second != Kind::kFile) {
    return Invalid(path, "hardlink target " + Quote(target) + " is not an earlier regular file of the package");
  }
  std::string tparent = ParentOf(target);
  auto tfd = OpenDirNoFollow(tparent);
  if (!tfd.ok()) return tfd.error();
  std::string target_name = target.substr(tparent.empty() ? 0 : tparent.size() + 1);
  std::string name;
  auto parent = PrepareParent(path, &name);
  if (!parent.ok()) return parent.error();
  if (implicit_dirs_.count(path) != 0) return Invalid(path, "duplicate entry (already a folder)");
  // Flags 0: a symlink would not be followed, and the target is a file we created anyway.
  if (::linkat(tfd->get(), target_name.c_str(), parent->get(), name.c_str(), 0) != 0) {
    return Sys("linking " + root_ + "/" + path);
  }
  kinds_[path] = Kind::kFile;
  return Status::Ok();
}

Status StagingTree::Finish() {
  cached_parent_fd_.Reset();
  // Children before parents: a folder shipped read-only is closed last.
  for (auto it = dir_modes_.rbegin(); it != dir_modes_.rend(); ++it) {
    auto fd = OpenDirNoFollow(it->first);
    if (!fd.ok()) return fd.error();
    if (::fchmod(fd->get(), it->second) != 0) return Sys("chmod " + root_ + "/" + it->first);
  }
  return Status::Ok();
}

const StagingTree::Kind* StagingTree::Find(const std::string& path) const {
  auto it = kinds_.find(path);
  return it == kinds_.end() ? nullptr : &it->second;
}

Status WriteAll(int fd, const void* data, size_t len, const std::string& what) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = ::write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Sys("writing " + what);
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace imgtool::pkg::internal
