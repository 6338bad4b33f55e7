// TarWriter: the libarchive half of WriteLayer. Turns entries into "restricted pax" tar
// bytes (plain ustar headers, a pax extended header only when ustar cannot hold a
// field: long or non-ASCII names, link targets over 100 bytes, files of 8 GiB and up,
// ids of 2^18 and up) and hands every byte to a callback. It never opens files.
//
// Fixed header rules, so equal entries give equal bytes: numeric uid/gid, empty
// uname/gname, the given mtime with zero nanoseconds, no atime/ctime, no xattrs/ACLs,
// no record padding (the stream ends with the two zero blocks of the tar format).
//
// Internal to imgtool/archive: not part of layer.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "archive/archive_util.h"
#include "archive/layer.h"
#include "oci/result.h"

namespace imgtool::archive::internal {

class TarWriter {
 public:
  // Receives tar bytes in order; returns false to abort (the consumer went away).
  using Output = std::function<bool(const void* data, size_t len)>;

  TarWriter() = default;
  ~TarWriter();
  TarWriter(const TarWriter&) = delete;
  TarWriter& operator=(const TarWriter&) = delete;

  Status Open(Output out);
  // `size` is the content length for kFile (ignored for other types).
  Status WriteHeader(const Entry& e, uint64_t size, int64_t mtime);
  Status WriteData(const void* data, size_t len);
  // Writes the end-of-archive blocks.
  Status Close();

 private:
  static la_ssize_t OnWrite(struct archive* a, void* self, const void* data, size_t len);
  Error LibError(const std::string& what) const;

  Output out_;
  WriteArchivePtr archive_;
  ArchiveEntryPtr entry_;
};

}  // namespace imgtool::archive::internal
