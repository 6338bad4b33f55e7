// StagingTree: the only code in imgtool/pkg that creates files. Every package format
// (deb data.tar, wheel zip) feeds its entries through it, so the path-safety rules live in
// one place and hold whatever the archive says:
//
//   - a path is relative, with no "", "." or ".." component and no NUL byte;
//   - each path is created once (a second entry with the same path is refused);
//   - an entry's parent must be a directory this tree created (never a symlink it created,
//     never something that was there before), and it is reached by openat() from the
//     staging root one component at a time with O_NOFOLLOW|O_DIRECTORY, so even a symlink
//     swapped in from outside is not followed;
//   - files are created with O_CREAT|O_EXCL|O_NOFOLLOW; symlinks are stored, never followed;
//   - a hardlink must name a regular file this tree created earlier.
//
// Errors are kInvalidInput "entry \"<path>\": <why>"; callers prefix the package.
//
// Internal to imgtool/pkg: not part of package.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "oci/result.h"
#include "pkg/handles.h"

namespace imgtool::pkg::internal {

// Empty when `path` is a well-formed relative path ("usr/lib/x.so"), else why not.
std::string PathProblem(std::string_view path);

// Archive spelling -> staging path: drops one leading "./" and a trailing "/" (tar's
// "./usr/lib/"), then checks PathProblem. "./" alone (the root) becomes "".
Result<std::string> NormalizeEntryPath(std::string_view raw);

class StagingTree {
 public:
  enum class Kind { kDir, kFile, kSymlink };

  // `root` must be an existing, empty folder. With `implicit_parents`, missing parent
  // folders are created (mode 0755), as zips often carry no folder entries; without it a
  // missing parent is refused (a .deb lists every folder it ships).
  static Result<StagingTree> Open(const std::string& root, bool implicit_parents);

  StagingTree(StagingTree&&) = default;
  StagingTree& operator=(StagingTree&&) = default;

  // Folder modes are applied in Finish(), so a read-only folder can still be filled.
  Status AddDir(const std::string& path, uint32_t mode);
  // Creates an empty file (mode 0600) and returns it open for writing; the caller writes
  // it and sets the shipped mode with fchmod().
  Result<UniqueFd> CreateFile(const std::string& path);
  Status AddSymlink(const std::string& path, const std::string& target);
  Status AddHardlink(const std::string& path, const std::string& target);
  Status Finish();

  const Kind* Find(const std::string& path) const;
  const std::string& root() const { return root_; }

 private:
  StagingTree() = default;
  // Checks the path is new and its parent is a folder of this tree (creating implicit
  // ones), then opens that parent; `name` gets the last component.
  Result<UniqueFd> PrepareParent(const std::string& path, std::string* name);
  Result<UniqueFd> OpenDirNoFollow(const std::string& path) const;

  std::string root_;
  UniqueFd root_fd_;
  bool implicit_parents_ = false;
  std::unordered_map<std::string, Kind> kinds_;
  std::vector<std::pair<std::string, uint32_t>> dir_modes_;  // in creation order
  std::unordered_map<std::string, size_t> implicit_dirs_;    // path -> index in dir_modes_
  // Consecutive entries mostly share a parent: keep the last one open.
  std::string cached_parent_;
  UniqueFd cached_parent_fd_;
};

// Writes all of `data` to `fd`; kInternal naming `what` on failure.
Status WriteAll(int fd, const void* data, size_t len, const std::string& what);

}  // namespace imgtool::pkg::internal
