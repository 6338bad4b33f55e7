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
