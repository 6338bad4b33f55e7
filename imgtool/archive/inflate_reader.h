// A layer's bytes decompressed as they are read: gzip (ISA-L, every member's CRC32 and
// ISIZE checked) or zstd (frame checksums checked), told from the first bytes; anything
// else passes through as it is (an uncompressed tar). For readers that must hand on a
// layer's uncompressed tar (a docker-archive serves and stores layers so) without
// holding it: each Read decodes at most what the caller asked for, so a small blob that
// inflates to terabytes costs the caller's buffer, never more memory.
//
// Not here: checking what comes out; the caller hashes it against the diff_id.
#pragma once

#include <memory>
#include <string>

#include "archive/layer.h"
#include "oci/reader.h"
#include "oci/result.h"

namespace imgtool::archive {

struct Inflating {
  std::unique_ptr<oci::Reader> reader;           // the uncompressed bytes
  Compression compression = Compression::kNone;  // what the stream was
};

// Reads the first bytes of `compressed` to tell its compression. A truncated or corrupt
// stream, or bytes after its end, is kIntegrity naming `name` when reached.
Result<Inflating> InflateReader(std::unique_ptr<oci::Reader> compressed, const std::string& name);

}  // namespace imgtool::archive
