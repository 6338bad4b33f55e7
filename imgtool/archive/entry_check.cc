#include "archive/entry_check.h"

#include <string_view>
#include <unordered_set>

#include "oci/quote.h"

namespace imgtool::archive::internal {

namespace {

Error Invalid(const std::string& path, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, "entry " + oci::Quoted(path) + ": " + why);
}

}  // namespace

std::string PathProblem(const std::string& path) {
  if (path.empty()) return "empty path";
  if (path.find('\0') != std::string::npos) return "NUL byte in path";
  if (path.front() == '/') return "absolute path";
  if (path.back() == '/') return "trailing \"/\"";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string_view part(path.data() + start, end - start);
    if (part.empty()) return "empty path component";
    if (part == ".") return "\".\" path component";
    if (part == "..") return "\"..\" path component";
    start = end + 1;
  }
  return "";
}

uint64_t ContentSize(const Entry& e) {
  if (e.type != EntryType::kFile) return 0;
  return e.source.empty() ? e.content.size() : e.size;
}

Status CheckEntries(const std::vector<Entry>& entries) {
  // Paths of earlier non-directory entries: what a hardlink may point at.
  std::unordered_set<std::string_view> link_targets;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.path.empty()) {
      return MakeError(ErrorKind::kInvalidInput, "entry " + std::to_string(i) + ": empty path");
    }
    if (std::string why = PathProblem(e.path); !why.empty()) return Invalid(e.path, why);
    if (i > 0) {
      const std::string& prev = entries[i - 1].path;
      // std::string compares as unsigned bytes, the order tar readers and our cache keys use.
      if (prev == e.path) return Invalid(e.path, "duplicate path");
      if (prev > e.path) {
        return Invalid(
            e.path, "not sorted: comes after " + oci::Quoted(prev) + " (entries must be sorted by path in byte order)");
      }
    }
    switch (e.type) {
      case EntryType::kFile:
        if (!e.source.empty() && !e.content.empty()) {
          return Invalid(e.path, "both a source and inline content");
        }
        if (e.source.empty() && e.size != 0 && e.size != e.content.size()) {
          return Invalid(e.path, "size " + std::to_string(e.size) + " does not match its inline content (" +
                                     std::to_string(e.content.size()) + " bytes)");
        }
        break;
      case EntryType::kDir:
        break;
      case EntryType::kSymlink:
        if (e.link_target.empty()) return Invalid(e.path, "symlink without a target");
        if (e.link_target.find('\0') != std::string::npos) return Invalid(e.path, "NUL byte in symlink target");
        break;
      case EntryType::kHardlink:
        if (link_targets.count(e.link_target) == 0) {
          return Invalid(e.path,
                         "hardlink target " + oci::Quoted(e.link_target) + " is not an earlier file in this layer");
        }
        break;
    }
    if (e.type != EntryType::kDir) link_targets.insert(e.path);
  }
  return Status::Ok();
}

}  // namespace imgtool::archive::internal
