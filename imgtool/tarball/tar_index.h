// Where each member of a plain (uncompressed) tar lies, from one pass over its headers:
// libarchive reads the headers and seeks over the content, so indexing a 10 GB
// `docker save` reads a few KiB per member. A member is then read by its offset (pread),
// as often and from as many threads as needed, without walking the tar again
// (containers/image scans from the start for every member it opens).
//
// The tar is outside bytes and this is where its names are judged, once, for every
// member: a name that is absolute or climbs out with "..", a name given twice (two
// readers could take two different members for it), a hardlink, device, FIFO or sparse
// file, a symlink whose target leaves the archive, and more than kMaxTarMembers members
// refuse the whole archive. Nothing is ever extracted or followed on the filesystem: a
// symlink member is only ever resolved to another member's name.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "oci/result.h"

namespace imgtool::tarball {

// A `docker save` holds about four members per layer; 65,536 is far past any image.
inline constexpr size_t kMaxTarMembers = 65536;

struct TarMember {
  enum class Kind { kFile, kDir, kSymlink };
  Kind kind = Kind::kFile;
  uint64_t offset = 0;  // kFile: where its content starts in the tar
  uint64_t size = 0;    // kFile: its content's length
  std::string target;   // kSymlink: the member it names, resolved and cleaned
};

// Go's path.Clean for a member name ("./a//b/" -> "a/b"); "" when the name is absolute,
// empty, or climbs above the archive's top.
std::string CleanMemberName(std::string_view name);

class TarIndex {
 public:
  // Indexes the plain tar open at `fd` (`file_size` bytes); `name` starts every error.
  static Result<TarIndex> Read(int fd, uint64_t file_size, const std::string& name);

  // The regular file at `path` (cleaned first): through one symlink when `follow` (a
  // `docker save` makes repeated layers symlinks to the first), else only a file.
  // kNotFound naming the path when there is none; kInvalidInput when it is something
  // else.
  Result<TarMember> File(const std::string& path, bool follow) const;
  size_t size() const { return members_.size(); }

 private:
  std::string name_;
  std::map<std::string, TarMember> members_;
};

}  // namespace imgtool::tarball
