// Reading layer blobs back with libarchive: every read filter (gzip, zstd, and the
// rest, detected from the bytes) and the tar formats. Used to list a layer for verify
// and diff, and to pull one small file (etc/passwd) out of a base image.
//
// Not here: hashing a whole blob as stored and as decompressed (blob_digest.cc does it
// in one pass with its own decompressors, which also check gzip CRCs; libarchive's gzip
// reader does not).
#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "archive/archive_util.h"
#include "archive/layer.h"
#include "fs/safe_open.h"

namespace imgtool::archive {

namespace {

using internal::ReadArchivePtr;
using ReaderFactory = std::function<Result<std::unique_ptr<oci::Reader>>()>;

constexpr size_t kReadBlock = 1 << 20;

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

Error BlobError(struct archive* a, const std::string& blob_path) {
  const char* msg = archive_error_string(a);
  return MakeError(ErrorKind::kIntegrity, blob_path + ": " + (msg ? msg : "unreadable layer"));
}

// libarchive pulls the blob's bytes from an oci::Reader through this callback.
struct ReaderSource {
  std::unique_ptr<oci::Reader> reader;
  std::vector<char> buf = std::vector<char>(kReadBlock);
  std::string error;  // the reader's own error, which libarchive would flatten
};

la_ssize_t ReadFromReader(struct archive* a, void* client, const void** out) {
  auto* src = static_cast<ReaderSource*>(client);
  auto got = src->reader->Read(src->buf.data(), src->buf.size());
  if (!got.ok()) {
    src->error = got.error().message;
    archive_set_error(a, EIO, "%s", src->error.c_str());
    return -1;
  }
  *out = src->buf.data();
  return static_cast<la_ssize_t>(*got);
}

// An open archive and the reader it pulls from (which must outlive it).
struct OpenedBlob {
  std::unique_ptr<ReaderSource> source;
  ReadArchivePtr archive;
  struct archive* get() const { return archive.get(); }
};

Result<OpenedBlob> OpenBlob(const ReaderFactory& open, const std::string& blob_path) {
  auto reader = open();
  if (!reader.ok()) return reader.error();
  OpenedBlob out{std::make_unique<ReaderSource>(), ReadArchivePtr(archive_read_new())};
  out.source->reader = std::move(*reader);
  if (!out.archive) return MakeError(ErrorKind::kInternal, "libarchive: out of memory");
  archive_read_support_filter_all(out.get());
  archive_read_support_format_tar(out.get());  // ustar, pax, GNU tar
  if (archive_read_open(out.get(), out.source.get(), nullptr, ReadFromReader, nullptr) != ARCHIVE_OK) {
    return BlobError(out.get(), blob_path);
  }
  return out;
}

// Next header, or nullptr at the end. ARCHIVE_WARN (a name not valid in the locale,
// kept as raw bytes) is fine; anything worse means a corrupt or truncated blob.
Result<struct archive_entry*> NextHeader(struct archive* a, const std::string& blob_path) {
  struct archive_entry* h = nullptr;
  int rc = archive_read_next_header(a, &h);
  if (rc == ARCHIVE_EOF) return static_cast<struct archive_entry*>(nullptr);
  if (rc < ARCHIVE_WARN) return BlobError(a, blob_path);
  return h;
}

// Calls fn(data, len) for each block of the current entry's content.
template <typename Fn>
Status ForEachBlock(struct archive* a, const std::string& blob_path, Fn&& fn) {
  for (;;) {
    const void* buf = nullptr;
    size_t len = 0;
    la_int64_t offset = 0;
    int rc = archive_read_data_block(a, &buf, &len, &offset);
    if (rc == ARCHIVE_EOF) return Status::Ok();
    if (rc < ARCHIVE_WARN) return BlobError(a, blob_path);
    IMGTOOL_TRY(fn(buf, len));
  }
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

Result<std::string> ReadFileFromLayer(const ReaderFactory& open, const std::string& blob_path,
                                      const std::string& path, uint64_t max_bytes) {
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
        return MakeError(ErrorKind::kInvalidInput, blob_path + ": " + want + ": larger than " +
                                                       std::to_string(max_bytes) + " bytes");
      }
      IMGTOOL_TRY(ForEachBlock(a->get(), blob_path, [&](const void* p, size_t n) -> Status {
        if (content.size() + n > max_bytes) {
          return MakeError(ErrorKind::kInvalidInput, blob_path + ": " + want + ": larger than " +
                                                         std::to_string(max_bytes) + " bytes");
        }
        content.append(static_cast<const char*>(p), n);
        return Status::Ok();
      }));
    }
    if (!found) return MakeError(ErrorKind::kNotFound, blob_path + ": no file " + want);
    if (!regular)
      return MakeError(ErrorKind::kInvalidInput, blob_path + ": " + want + ": not a regular file");
    if (link.empty()) return content;
    want = link;
  }
  return MakeError(ErrorKind::kInvalidInput, blob_path + ": " + path + ": too many hardlink hops");
}

ReaderFactory FileReaderFactory(const std::string& path) {
  return [path]() -> Result<std::unique_ptr<oci::Reader>> {
    fs::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
      int e = errno;
      return MakeError(e == ENOENT ? ErrorKind::kNotFound : ErrorKind::kInternal, path + ": " + std::strerror(e));
    }
    return std::unique_ptr<oci::Reader>(std::make_unique<fs::FdReader>(std::move(fd)));
  };
}

ReaderFactory BlobReaderFactory(const oci::Blob& blob) {
  return [&blob] { return blob.Open(); };
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
