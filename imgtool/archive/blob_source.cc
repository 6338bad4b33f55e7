#include "archive/blob_source.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "archive/archive_library.h"
#include "fs/safe_open.h"

namespace imgtool::archive::internal {

namespace {

constexpr size_t kReadBlock = 1 << 20;

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

}  // namespace

Error BlobError(struct archive* a, const std::string& blob_path) {
  const char* msg = archive_error_string(a);
  return MakeError(ErrorKind::kIntegrity, blob_path + ": " + (msg ? msg : "unreadable layer"));
}

Status OpenedBlob::Drain(const std::string& blob_path) {
  for (;;) {
    auto got = source->reader->Read(source->buf.data(), source->buf.size());
    if (!got.ok()) return got.error().Context(blob_path);
    if (*got == 0) return Status::Ok();
  }
}

Result<OpenedBlob> OpenBlob(const ReaderFactory& open, const std::string& blob_path) {
  auto reader = open();
  if (!reader.ok()) return reader.error();
  IMGTOOL_TRY(libarchive::Load());
  OpenedBlob out{std::make_unique<ReaderSource>(), ReadArchivePtr(archive_read_new())};
  out.source->reader = std::move(*reader);
  out.source->buf.resize(kReadBlock);
  if (!out.archive) return MakeError(ErrorKind::kInternal, "libarchive: out of memory");
  archive_read_support_filter_all(out.get());
  archive_read_support_format_tar(out.get());  // ustar, pax, GNU tar
  if (archive_read_open(out.get(), out.source.get(), nullptr, ReadFromReader, nullptr) != ARCHIVE_OK) {
    return BlobError(out.get(), blob_path);
  }
  return out;
}

Result<struct archive_entry*> NextHeader(struct archive* a, const std::string& blob_path) {
  struct archive_entry* h = nullptr;
  int rc = archive_read_next_header(a, &h);
  if (rc == ARCHIVE_EOF) return static_cast<struct archive_entry*>(nullptr);
  if (rc < ARCHIVE_WARN) return BlobError(a, blob_path);
  return h;
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

}  // namespace imgtool::archive::internal
