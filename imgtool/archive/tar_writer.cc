#include "archive/tar_writer.h"

#include "archive/archive_library.h"

#include <cerrno>
#include <utility>

namespace imgtool::archive::internal {

TarWriter::~TarWriter() {
  // Freeing an unfinished archive writes its end blocks: do not let them reach an output
  // whose owner may already be gone.
  out_ = nullptr;
  archive_.reset();
}

Status TarWriter::Open(Output out) {
  out_ = std::move(out);
  IMGTOOL_TRY(libarchive::Load());
  archive_.reset(archive_write_new());
  entry_.reset(archive_entry_new());
  if (!archive_ || !entry_) return MakeError(ErrorKind::kInternal, "tar: out of memory");
  struct archive* a = archive_.get();
  if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK || archive_write_add_filter_none(a) != ARCHIVE_OK ||
      // 0: no blocking, every write goes straight to OnWrite, and no padding of the last
      // record to 10 KiB (OCI layers from other tools end after the two zero blocks too).
      archive_write_set_bytes_per_block(a, 0) != ARCHIVE_OK) {
    return LibError("tar: setting up the writer");
  }
  if (archive_write_open2(a, this, nullptr, &TarWriter::OnWrite, nullptr, nullptr) != ARCHIVE_OK) {
    return LibError("tar: opening the writer");
  }
  return Status::Ok();
}

Status TarWriter::WriteHeader(const Entry& e, uint64_t size, int64_t mtime) {
  struct archive_entry* h = entry_.get();
  archive_entry_clear(h);
  archive_entry_copy_pathname(h, e.path.c_str());
  archive_entry_set_uid(h, e.uid);
  archive_entry_set_gid(h, e.gid);
  archive_entry_set_mtime(h, static_cast<time_t>(mtime), 0);
  switch (e.type) {
    case EntryType::kFile:
      archive_entry_set_filetype(h, AE_IFREG);
      archive_entry_set_size(h, static_cast<la_int64_t>(size));
      break;
    case EntryType::kDir:
      archive_entry_set_filetype(h, AE_IFDIR);
      break;
    case EntryType::kSymlink:
      archive_entry_set_filetype(h, AE_IFLNK);
      archive_entry_copy_symlink(h, e.link_target.c_str());
      break;
    case EntryType::kHardlink:
      archive_entry_set_filetype(h, AE_IFREG);
      archive_entry_copy_hardlink(h, e.link_target.c_str());
      break;
  }
  // After the file type: set_perm keeps the type bits. Callers passing st_mode are fine.
  archive_entry_set_perm(h, e.mode & 07777);
  // ARCHIVE_WARN: a name that is not ASCII was stored as raw bytes (hdrcharset=BINARY).
  if (archive_write_header(archive_.get(), h) < ARCHIVE_WARN) {
    return LibError("tar: writing header of \"" + e.path + "\"");
  }
  return Status::Ok();
}

Status TarWriter::WriteData(const void* data, size_t len) {
  la_ssize_t n = archive_write_data(archive_.get(), data, len);
  if (n < 0 || static_cast<size_t>(n) != len) return LibError("tar: writing file data");
  return Status::Ok();
}

Status TarWriter::Close() {
  if (archive_write_close(archive_.get()) != ARCHIVE_OK) return LibError("tar: finishing the stream");
  return Status::Ok();
}

la_ssize_t TarWriter::OnWrite(struct archive* a, void* self, const void* data, size_t len) {
  auto* w = static_cast<TarWriter*>(self);
  if (!w->out_ || !w->out_(data, len)) {
    archive_set_error(a, ECANCELED, "layer pipeline stopped");
    return -1;
  }
  return static_cast<la_ssize_t>(len);
}

Error TarWriter::LibError(const std::string& what) const {
  const char* msg = archive_ ? archive_error_string(archive_.get()) : nullptr;
  return MakeError(ErrorKind::kInternal, what + ": " + (msg ? msg : "unknown libarchive error"));
}

}  // namespace imgtool::archive::internal
