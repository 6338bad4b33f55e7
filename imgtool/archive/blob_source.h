// A layer blob opened for reading with libarchive: the blob's bytes come from an
// oci::Reader (a file of ours, or any image's checked stream), libarchive detects the
// compression and the tar format. Shared by the listing and file readers
// (layer_reader.cc) and the header scan (layer_scan.cc).
//
// Internal to imgtool/archive: not part of layer.h.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "archive/archive_util.h"
#include "oci/image.h"
#include "oci/reader.h"
#include "oci/result.h"

namespace imgtool::archive::internal {

using ReaderFactory = std::function<Result<std::unique_ptr<oci::Reader>>()>;

// libarchive pulls the blob's bytes from an oci::Reader through a callback.
struct ReaderSource {
  std::unique_ptr<oci::Reader> reader;
  std::vector<char> buf;
  std::string error;  // the reader's own error, which libarchive would flatten
};

// An open archive and the reader it pulls from (which must outlive it).
struct OpenedBlob {
  std::unique_ptr<ReaderSource> source;
  ReadArchivePtr archive;
  struct archive* get() const {
    return archive.get();
  }
  // Reads what libarchive left of the blob (after the tar's end blocks), so that a
  // CheckedReader reaches the end and checks the digest and size of every byte.
  Status Drain(const std::string& blob_path);
};

Result<OpenedBlob> OpenBlob(const ReaderFactory& open, const std::string& blob_path);

Error BlobError(struct archive* a, const std::string& blob_path);

// Next header, or nullptr at the end. ARCHIVE_WARN (a name not valid in the locale,
// kept as raw bytes) is fine; anything worse means a corrupt or truncated blob.
Result<struct archive_entry*> NextHeader(struct archive* a, const std::string& blob_path);

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

ReaderFactory FileReaderFactory(const std::string& path);
ReaderFactory BlobReaderFactory(const oci::Blob& blob);

}  // namespace imgtool::archive::internal
