// Raw header scans and reading one entry by its position: what imgtool/rootfs needs to
// apply layers the way a runtime's unpacker does. Names stay as stored; content is only
// read for the one entry asked for.
#include "archive/blob_source.h"
#include "archive/layer.h"

namespace imgtool::archive {

namespace {

HeaderType TypeOf(struct archive_entry* h) {
  if (archive_entry_hardlink(h) != nullptr) return HeaderType::kHardlink;
  switch (archive_entry_filetype(h)) {
    case AE_IFREG:
      return HeaderType::kFile;
    case AE_IFDIR:
      return HeaderType::kDir;
    case AE_IFLNK:
      return HeaderType::kSymlink;
    default:
      return HeaderType::kOther;
  }
}

TarHeader HeaderOf(struct archive_entry* h, uint64_t ordinal) {
  TarHeader t;
  t.ordinal = ordinal;
  const char* name = archive_entry_pathname(h);
  t.name = name ? name : "";
  t.type = TypeOf(h);
  t.mode = archive_entry_perm(h) & 07777;
  if (t.type == HeaderType::kFile) t.size = static_cast<uint64_t>(archive_entry_size(h));
  const char* link = t.type == HeaderType::kHardlink  ? archive_entry_hardlink(h)
                     : t.type == HeaderType::kSymlink ? archive_entry_symlink(h)
                                                      : nullptr;
  if (link) t.link = link;
  t.uid = static_cast<uint32_t>(archive_entry_uid(h));
  t.gid = static_cast<uint32_t>(archive_entry_gid(h));
  t.mtime = archive_entry_mtime(h);
  t.mtime_nsec = static_cast<int32_t>(archive_entry_mtime_nsec(h));
  if (t.type == HeaderType::kOther) t.special = archive_entry_filetype(h);
  archive_entry_xattr_reset(h);
  const char* xname = nullptr;
  const void* xvalue = nullptr;
  size_t xsize = 0;
  while (archive_entry_xattr_next(h, &xname, &xvalue, &xsize) == ARCHIVE_OK) {
    t.xattrs.emplace_back(xname ? xname : "", std::string(static_cast<const char*>(xvalue), xsize));
  }
  return t;
}

Error TooLarge(const std::string& blob_path, uint64_t ordinal, uint64_t max_bytes) {
  return MakeError(ErrorKind::kInvalidInput, blob_path + ": entry " + std::to_string(ordinal) + ": larger than " +
                                                 std::to_string(max_bytes) + " bytes");
}

}  // namespace

Status ScanLayer(const oci::Blob& layer, const std::function<Status(const TarHeader&)>& visit) {
  internal::ScopedCLocale c_locale;  // names come back as the bytes stored
  const std::string blob_path = "layer " + layer.digest().str();
  auto a = internal::OpenBlob(internal::BlobReaderFactory(layer), blob_path);
  if (!a.ok()) return a.error();
  for (uint64_t ordinal = 0;; ++ordinal) {
    auto next = internal::NextHeader(a->get(), blob_path);
    if (!next.ok()) return next.error();
    if (*next == nullptr) break;
    IMGTOOL_TRY(visit(HeaderOf(*next, ordinal)));
  }
  return a->Drain(blob_path);
}

Status ExtractLayer(const oci::Blob& layer, const std::function<Status(const TarHeader&, const ReadContent&)>& visit) {
  internal::ScopedCLocale c_locale;
  const std::string blob_path = "layer " + layer.digest().str();
  auto a = internal::OpenBlob(internal::BlobReaderFactory(layer), blob_path);
  if (!a.ok()) return a.error();
  struct archive* ar = a->get();
  const ReadContent read = [&](const ContentBlock& block) -> Status {
    for (;;) {
      const void* buf = nullptr;
      size_t len = 0;
      la_int64_t offset = 0;
      int rc = archive_read_data_block(ar, &buf, &len, &offset);
      if (rc == ARCHIVE_EOF) return Status::Ok();
      if (rc < ARCHIVE_WARN || offset < 0) return internal::BlobError(ar, blob_path);
      IMGTOOL_TRY(block(static_cast<uint64_t>(offset), buf, len));
    }
  };
  for (uint64_t ordinal = 0;; ++ordinal) {
    auto next = internal::NextHeader(ar, blob_path);
    if (!next.ok()) return next.error();
    if (*next == nullptr) break;
    IMGTOOL_TRY(visit(HeaderOf(*next, ordinal), read));
  }
  return a->Drain(blob_path);
}

Result<std::string> ReadLayerEntry(const oci::Blob& layer, uint64_t ordinal, uint64_t max_bytes) {
  internal::ScopedCLocale c_locale;
  const std::string blob_path = "layer " + layer.digest().str();
  auto a = internal::OpenBlob(internal::BlobReaderFactory(layer), blob_path);
  if (!a.ok()) return a.error();
  for (uint64_t i = 0; i <= ordinal; ++i) {
    auto next = internal::NextHeader(a->get(), blob_path);
    if (!next.ok()) return next.error();
    if (*next == nullptr) {
      return MakeError(ErrorKind::kIntegrity, blob_path + ": no entry " + std::to_string(ordinal));
    }
    if (i < ordinal) continue;
    if (static_cast<uint64_t>(archive_entry_size(*next)) > max_bytes) return TooLarge(blob_path, ordinal, max_bytes);
  }
  std::string content;
  IMGTOOL_TRY(internal::ForEachBlock(a->get(), blob_path, [&](const void* p, size_t n) -> Status {
    if (content.size() + n > max_bytes) return TooLarge(blob_path, ordinal, max_bytes);
    content.append(static_cast<const char*>(p), n);
    return Status::Ok();
  }));
  // The rest of the blob as stored (not inflated): the bytes a decision rests on are
  // checked against the digest before they are handed out.
  IMGTOOL_TRY(a->Drain(blob_path));
  return content;
}

}  // namespace imgtool::archive
