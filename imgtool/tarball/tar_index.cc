#include "tarball/tar_index.h"

#include <archive.h>
#include <archive_entry.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "archive/archive_library.h"
#include "oci/quote.h"

namespace imgtool::tarball {

namespace {

// Headers are a few hundred bytes; a small block keeps what is read near what is needed
// (libarchive seeks over content in whole blocks).
constexpr size_t kBlock = 16 << 10;

struct ReadFree {
  void operator()(struct archive* a) const { archive_read_free(a); }
};

std::string Q(std::string_view s) { return oci::Quoted(s, '\''); }

std::string LibMessage(struct archive* a) {
  const char* msg = archive_error_string(a);
  return msg ? msg : "libarchive error";
}

std::string ParentOf(const std::string& clean) {
  auto slash = clean.rfind('/');
  return slash == std::string::npos ? "" : clean.substr(0, slash);
}

// The member a symlink names, or "" when its target leaves the archive. Resolved by name
// against the symlink's folder, as containers/image resolves it (never on the disk).
std::string ResolveLink(const std::string& clean, std::string_view target) {
  if (target.empty() || target[0] == '/') return "";
  std::string parent = ParentOf(clean);
  std::string joined = parent.empty() ? std::string(target) : parent + "/" + std::string(target);
  std::string resolved = CleanMemberName(joined);
  return resolved == "." ? "" : resolved;
}

// One header made into a member, or why the archive is refused.
Result<TarMember> MemberOf(struct archive* a, struct archive_entry* e, const std::string& clean, uint64_t file_size) {
  const std::string what = "member " + Q(clean);
  if (archive_entry_hardlink(e) != nullptr) {
    return MakeError(ErrorKind::kInvalidInput,
                     what + " is a hardlink; a docker-archive holds files, folders and symlinks");
  }
  TarMember m;
  switch (archive_entry_filetype(e)) {
    case AE_IFDIR:
      m.kind = TarMember::Kind::kDir;
      return m;
    case AE_IFLNK: {
      const char* target = archive_entry_symlink(e);
      m.kind = TarMember::Kind::kSymlink;
      m.target = ResolveLink(clean, target ? target : "");
      if (m.target.empty()) {
        return MakeError(ErrorKind::kInvalidInput,
                         "symlink " + Q(clean) + " -> " + Q(target ? target : "") + " leads outside the archive");
      }
      return m;
    }
    case AE_IFREG:
      break;
    default:
      return MakeError(ErrorKind::kInvalidInput,
                       what + " is a device, FIFO or socket; a docker-archive holds files, folders and symlinks");
  }
  if (archive_entry_sparse_count(e) > 0) return MakeError(ErrorKind::kInvalidInput, what + " is a sparse file");
  // After the header (and any pax or GNU long-name headers) the format reader has
  // consumed exactly up to the member's first content byte.
  la_int64_t offset = archive_filter_bytes(a, 0);
  la_int64_t size = archive_entry_size(e);
  if (offset < 0 || size < 0 || static_cast<uint64_t>(offset) > file_size ||
      static_cast<uint64_t>(size) > file_size - static_cast<uint64_t>(offset)) {
    return MakeError(ErrorKind::kIntegrity, what + " runs past the end of the archive (truncated?)");
  }
  m.offset = static_cast<uint64_t>(offset);
  m.size = static_cast<uint64_t>(size);
  return m;
}

}  // namespace

std::string CleanMemberName(std::string_view name) {
  if (name.empty() || name[0] == '/') return "";
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view part = name.substr(start, end - start);
    if (part == "..") {
      if (parts.empty()) return "";
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  if (parts.empty()) return ".";
  std::string out;
  for (auto p : parts) {
    if (!out.empty()) out += '/';
    out += p;
  }
  return out;
}

Result<TarIndex> TarIndex::Read(int fd, uint64_t file_size, const std::string& name) {
  TarIndex index;
  index.name_ = name;
  if (::lseek(fd, 0, SEEK_SET) != 0) return MakeError(ErrorKind::kInternal, name + ": cannot seek");
  IMGTOOL_TRY(libarchive::Load());
  std::unique_ptr<struct archive, ReadFree> a(archive_read_new());
  archive_read_support_format_tar(a.get());  // ustar, pax and GNU; no filters: the caller inflated it
  if (archive_read_open_fd(a.get(), fd, kBlock) != ARCHIVE_OK) {
    return MakeError(ErrorKind::kInvalidInput, name + ": not a tar archive (" + LibMessage(a.get()) + ")");
  }
  struct archive_entry* e = nullptr;
  for (bool first = true;; first = false) {
    int rc = archive_read_next_header(a.get(), &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN) {
      if (first) return MakeError(ErrorKind::kInvalidInput, name + ": not a tar archive (" + LibMessage(a.get()) + ")");
      return MakeError(ErrorKind::kIntegrity, name + ": truncated or corrupt tar (" + LibMessage(a.get()) + ")");
    }
    const char* raw = archive_entry_pathname(e);
    std::string clean = CleanMemberName(raw ? raw : "");
    if (clean.empty()) {
      return MakeError(ErrorKind::kInvalidInput,
                       name + ": member " + Q(raw ? raw : "") + " lies outside the archive; refusing it");
    }
    if (clean == "." && archive_entry_filetype(e) == AE_IFDIR) continue;  // the top folder itself
    auto member = MemberOf(a.get(), e, clean, file_size);
    if (!member.ok()) return member.error().Context(name);
    if (!index.members_.emplace(clean, std::move(*member)).second) {
      return MakeError(ErrorKind::kInvalidInput,
                       name + ": member " + Q(clean) + " appears twice; refusing an ambiguous archive");
    }
    if (index.members_.size() > kMaxTarMembers) {
      return MakeError(ErrorKind::kInvalidInput,
                       name + ": more than " + std::to_string(kMaxTarMembers) + " members; refusing the archive");
    }
  }
  return index;
}

Result<TarMember> TarIndex::File(const std::string& path, bool follow) const {
  std::string clean = CleanMemberName(path);
  if (clean.empty() || clean == ".") {
    return MakeError(ErrorKind::kInvalidInput, name_ + ": " + Q(path) + " names nothing inside the archive");
  }
  auto it = members_.find(clean);
  if (it != members_.end() && follow && it->second.kind == TarMember::Kind::kSymlink) {
    it = members_.find(it->second.target);  // one hop: a symlink to a symlink is refused below
  }
  if (it == members_.end()) return MakeError(ErrorKind::kNotFound, name_ + ": no member " + Q(clean));
  if (it->second.kind != TarMember::Kind::kFile) {
    return MakeError(ErrorKind::kInvalidInput, name_ + ": " + Q(it->first) + " is not a regular file");
  }
  return it->second;
}

}  // namespace imgtool::tarball
