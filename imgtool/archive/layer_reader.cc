// Reading layer blobs back with libarchive: every read filter (gzip, zstd, and the
// rest, detected from the bytes) and the tar formats. Used to list a layer for verify
// and diff, and to pull one small file (etc/passwd) out of a base image.
//
// Not here: hashing a whole blob as stored and as decompressed (blob_digest.cc does it
// in one pass with its own decompressors, which also check gzip CRCs; libarchive's gzip
// reader does not).
#include <string>
#include <string_view>
#include <vector>

#include "archive/blob_source.h"
#include "archive/layer.h"

namespace imgtool::archive {

namespace {

using internal::BlobReaderFactory;
using internal::FileReaderFactory;
using internal::ForEachBlock;
using internal::NextHeader;
using internal::OpenBlob;
using internal::ReaderFactory;

// "./usr/lib/" -> "usr/lib"; "./" -> "".
std::string NormalizePath(const char* raw) {
  std::string_view p = raw ? raw : "";
  for (;;) {
    if (p.substr(0, 2) == "./") {
      p.remove_prefix(2);
    } else if (p.substr(0, 1) == "/") {
      p.remove_prefix(1);
    } else {
      break;
    }
  }
  while (!p.empty() && p.back() == '/') p.remove_suffix(1);
  if (p == ".") return "";
  return std::string(p);
}

// Device nodes, FIFOs and sockets have no EntryType (imgtool never writes them): false.
bool TypeOf(struct archive_entry* h, EntryType* type) {
  if (archive_entry_hardlink(h) != nullptr) {
    *type = EntryType::kHardlink;
    return true;
  }
  switch (archive_entry_filetype(h)) {
    case AE_IFREG:
      *type = EntryType::kFile;
      return true;
    case AE_IFDIR:
      *type = EntryType::kDir;
      return true;
    case AE_IFLNK:
      *type = EntryType::kSymlink;
      return true;
    default:
      return false;
  }
}

Result<std::vector<LayerFile>> ListLayer(const ReaderFactory& open, const std::string& blob_path) {
  internal::ScopedCLocale c_locale;  // names come back as the bytes stored
  auto a = OpenBlob(open, blob_path);
  if (!a.ok()) return a.error();
  std::vector<LayerFile> files;
  for (;;) {
    auto next = NextHeader(a->get(), blob_path);
    if (!next.ok()) return next.error();
    struct archive_entry* h = *next;
    if (h == nullptr) break;
    LayerFile f;
    f.path = NormalizePath(archive_entry_pathname(h));
    if (f.path.empty() || !TypeOf(h, &f.type)) continue;  // the root "./" entry, devices
    f.mode = archive_entry_perm(h) & 07777;
    f.uid = static_cast<uint32_t>(archive_entry_uid(h));
    f.gid = static_cast<uint32_t>(archive_entry_gid(h));
    f.mtime = archive_entry_mtime(h);
    if (f.type == EntryType::kHardlink) f.link_target = NormalizePath(archive_entry_hardlink(h));
    if (f.type == EntryType::kSymlink) f.link_target = archive_entry_symlink(h);
    if (f.type == EntryType::kFile) {
      f.size = static_cast<uint64_t>(archive_entry_size(h));
      oci::Sha256 hash;
      IMGTOOL_TRY(ForEachBlock(a->get(), blob_path, [&](const void* p, size_t n) {
        hash.Update(p, n);
        return Status::Ok();
      }));
      f.content_digest = hash.Finish();
    }
    files.push_back(std::move(f));
  }
  return files;
}

Result<std::string> ReadFileFromLayer(const ReaderFactory& open, const std::string& blob_path, const std::string& path,
                                      uint64_t max_bytes) {
  // A path may occur more than once in a tar; extraction keeps the last one, so do we.
  // A hardlink is followed to its target (an earlier entry) with a second pass.
  constexpr int kMaxLinkHops = 8;
  std::string want = NormalizePath(path.c_str());
  for (int hop = 0; hop <= kMaxLinkHops; ++hop) {
    internal::ScopedCLocale c_locale;
    auto a = OpenBlob(open, blob_path);
    if (!a.ok()) return a.error();
    bool found = false;
    bool regular = false;
    std::string content;
    std::string link;
    for (;;) {
      auto next = NextHeader(a->get(), blob_path);
      if (!next.ok()) return next.error();
      struct archive_entry* h = *next;
      if (h == nullptr) break;
      if (NormalizePath(archive_entry_pathname(h)) != want) continue;
      EntryType type{};
      found = true;
      regular = TypeOf(h, &type) && (type == EntryType::kFile || type == EntryType::kHardlink);
      content.clear();
      link.clear();
      if (!regular) continue;
      if (type == EntryType::kHardlink) {
        link = NormalizePath(archive_entry_hardlink(h));
        continue;
      }
      if (static_cast<uint64_t>(archive_entry_size(h)) > max_bytes) {
        return MakeError(ErrorKind::kInvalidInput,
                         blob_path + ": " + want + ": larger than " + std::to_string(max_bytes) + " bytes");
      }
      IMGTOOL_TRY(ForEachBlock(a->get(), blob_path, [&](const void* p, size_t n) -> Status {
        if (content.size() + n > max_bytes) {
          return MakeError(ErrorKind::kInvalidInput,
                           blob_path + ": " + want + ": larger than " + std::to_string(max_bytes) + " bytes");
        }
        content.append(static_cast<const char*>(p), n);
        return Status::Ok();
      }));
    }
    if (!found) return MakeError(ErrorKind::kNotFound, blob_path + ": no file " + want);
    if (!regular) return MakeError(ErrorKind::kInvalidInput, blob_path + ": " + want + ": not a regular file");
    if (link.empty()) return content;
    want = link;
  }
  return MakeError(ErrorKind::kInvalidInput, blob_path + ": " + path + ": too many hardlink hops");
}

}  // namespace

Result<std::vector<LayerFile>> ListLayer(const std::string& blob_path) {
  return ListLayer(FileReaderFactory(blob_path), blob_path);
}

Result<std::vector<LayerFile>> ListLayer(const oci::Blob& blob) {
  return ListLayer(BlobReaderFactory(blob), "layer " + blob.digest().str());
}

Result<std::string> ReadFileFromLayer(const std::string& blob_path, const std::string& path, uint64_t max_bytes) {
  return ReadFileFromLayer(FileReaderFactory(blob_path), blob_path, path, max_bytes);
}

Result<std::string> ReadFileFromLayer(const oci::Blob& blob, const std::string& path, uint64_t max_bytes) {
  return ReadFileFromLayer(BlobReaderFactory(blob), "layer " + blob.digest().str(), path, max_bytes);
}

}  // namespace imgtool::archive
