// Deterministic layers: a sorted list of entries -> a tar stream -> a compressed blob,
// in one streaming pass with bounded memory (read -> tar -> sha256 = diff_id ->
// compress -> sha256 = digest -> blob file). This is the part of a build that touches
// gigabytes; everything here is built for throughput on two cores.
//
// Not here: deciding which files go in a layer (build/plan) or where blobs live (layout).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "archive/core_budget.h"
#include "fs/atomic_file.h"
#include "fs/safe_open.h"
#include "oci/digest.h"
#include "oci/image.h"
#include "oci/reader.h"
#include "oci/result.h"

namespace imgtool::archive {

enum class EntryType { kFile, kDir, kSymlink, kHardlink };

// One entry of a layer as it will appear in the tar. Metadata only: a file's content is
// streamed from `source` (or taken from `content`) while the layer is written.
struct Entry {
  std::string path;  // in-image, relative: "usr/lib/x.so" (no leading "/" or "./",
                     // no trailing "/", no "." or ".." components)
  EntryType type = EntryType::kFile;
  uint32_t mode = 0644;  // permission bits including setuid/setgid/sticky (07777)
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t size = 0;   // kFile: bytes expected from source; a different count read is
                       // an error ("changed while building")
  std::string source;  // kFile: host path to stream from, opened by OpenSource
                       // (nothing followed that planning saw as no symlink);
                       // empty when `content` is used
  // kFile: a folder `source` lies in whose path below it planning resolved (a layer's
  // root, a staging folder): nothing below it is followed when the source is opened.
  // Empty: only the last component is not followed.
  std::string source_root;
  // kFile from `source`: when set, the bytes streamed must hash to it, else the layer
  // fails (kIntegrity naming the source and both digests) before anything is committed.
  // Set where the content was hashed by an earlier open (a lock, a RECORD, an unpacker),
  // so the layer holds the bytes that digest describes, not whatever the name held later.
  oci::Digest expect_sha256;
  std::string content;      // kFile: inline content (generated files such as /etc/passwd)
  std::string link_target;  // kSymlink: target as stored; kHardlink: in-image path of the
                            // earlier entry it links to
};

// Opens a kFile entry's source as WriteLayer reads it: beneath `source_root` one component
// at a time with O_NOFOLLOW (fs::OpenRegularBeneath), else with its last component not
// followed (fs::OpenRegularNoFollow); never waits on a FIFO, refuses anything but a
// regular file. So a symlink put in place of a file or a folder planning walked (to a
// key, say) is refused, never read. For every reader of planned sources (the layer, the
// lock, the build record's toolchain).
Result<fs::UniqueFd> OpenSource(const Entry& e, uint64_t* size = nullptr);

enum class Compression { kGzip, kZstd, kNone };

// Which compressor wrote a layer and how, for build records: the bytes of a layer are a
// function of its tar stream and these three strings.
struct CompressorInfo {
  std::string name;     // "imgtool-deflate", "libzstd", "none"
  std::string version;  // the encoder's format version, or the library's
  std::string mode;     // the parameters that shape the bytes
};
CompressorInfo DescribeCompressor(Compression c);

// "application/vnd.oci.image.layer.v1.tar+gzip" and friends.
std::string LayerMediaType(Compression c);
Result<Compression> CompressionFromName(const std::string& name);  // "gzip", "zstd", "none"
Result<Compression> CompressionFromMediaType(const std::string& media_type);

struct LayerOptions {
  Compression compression = Compression::kGzip;
  int64_t mtime = 0;  // SOURCE_DATE_EPOCH: every entry's mtime
  // Compressor threads; 0: one per CPU this process may run on (fs::UsableCpus), at most
  // kDefaultMaxThreads (each costs ~2 MiB of chunk buffers for gzip). Never changes a byte.
  int threads = 0;
  static constexpr int kDefaultMaxThreads = 16;
  // Write the blob with O_DIRECT where the filesystem allows it (fs::AtomicFile::
  // WriteDirect): no copy into the page cache, little left for the commit's fsync; a
  // reader right after then reads it from the disk. Never changes a byte.
  bool direct_write = true;
  // Called now and then with bytes of file content written so far and the total.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

struct WrittenLayer {
  oci::Digest digest;   // sha256 of the compressed blob
  oci::Digest diff_id;  // sha256 of the uncompressed tar
  uint64_t size = 0;    // compressed bytes
  uint64_t uncompressed_size = 0;
  std::string media_type;
  // sha256 of each kFile entry's content, index-aligned with `entries` (empty digest for
  // entries of other types).
  std::vector<oci::Digest> file_digests;
};

// Writes `entries` (sorted by path in byte order, parents before children, no
// duplicates: checked, an error otherwise) as a tar into `out`, which the caller has
// opened and will commit under the returned digest. Tar rules: numeric uid/gid, empty
// uname/gname, mtime = options.mtime, no atime/ctime, ustar headers with PAX only where
// needed (long names, big files). Gzip has a fixed header (MTIME 0, no name, OS 255) at
// a fixed level; zstd uses fixed parameters, so the blob bytes depend only on the
// entries and this library's version.
Result<WrittenLayer> WriteLayer(const std::vector<Entry>& entries, const LayerOptions& options, fs::AtomicFile& out);

// ---- Reading layers back (verify, diff, finding /etc/passwd in a base image) ----

struct LayerFile {
  std::string path;  // as in the tar, normalized: no leading "./" or "/", no trailing "/"
  EntryType type = EntryType::kFile;
  uint32_t mode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t size = 0;
  int64_t mtime = 0;
  std::string link_target;
  oci::Digest content_digest;  // kFile only
};

// Streams a layer blob (gzip, zstd or plain tar, detected from the bytes) and lists its
// entries in tar order with the sha256 of each file's content. From a file of ours, or
// from any image's layer (checked as it streams).
Result<std::vector<LayerFile>> ListLayer(const std::string& blob_path);
Result<std::vector<LayerFile>> ListLayer(const oci::Blob& layer);

struct BlobDigests {
  oci::Digest digest;  // of the bytes on disk
  uint64_t size = 0;
  oci::Digest diff_id;  // of the decompressed stream
  uint64_t uncompressed_size = 0;
};
// One streaming pass: hashes the blob as stored and as decompressed. A truncated or
// corrupt compressed stream is a kIntegrity error naming `name`.
Result<BlobDigests> DigestLayerBlob(const std::string& blob_path);
// `decompress` false: the sha256 as stored only (diff_id = digest), nothing inflated.
// `cores`: a big compressed layer takes a spare core from it (while there is one) and
// goes on as a pipeline of three threads, same results and errors (core_budget.h);
// nullptr: the caller's thread only.
Result<BlobDigests> DigestLayer(oci::Reader& blob, const std::string& name, bool decompress = true,
                                CoreBudget* cores = nullptr);

// Content of the regular file at `path` ("etc/passwd") in the layer, or kNotFound.
// Refuses files larger than max_bytes.
Result<std::string> ReadFileFromLayer(const std::string& blob_path, const std::string& path,
                                      uint64_t max_bytes = 1 << 20);
Result<std::string> ReadFileFromLayer(const oci::Blob& layer, const std::string& path, uint64_t max_bytes = 1 << 20);

// ---- Raw headers, for a view that unpacks like a runtime (imgtool/rootfs) ----

enum class HeaderType { kFile, kDir, kSymlink, kHardlink, kOther };  // kOther: devices, FIFOs

// One tar header as stored: the name and link are not normalized ("./etc//passwd/" stays
// so), because how they are cleaned is the unpacker's business.
struct TarHeader {
  uint64_t ordinal = 0;  // 0, 1, ... in tar order: what ReadLayerEntry takes
  std::string name;
  HeaderType type = HeaderType::kFile;
  uint32_t mode = 0;  // 07777
  uint64_t size = 0;  // kFile
  std::string link;   // kSymlink: the target; kHardlink: the name linked to
  // What an unpacker onto a disk also needs (imgtool/bundle):
  uint32_t uid = 0;
  uint32_t gid = 0;
  int64_t mtime = 0;  // seconds, and nanoseconds from PAX
  int32_t mtime_nsec = 0;
  uint32_t special = 0;  // kOther: its S_IFMT bits (S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK)
  std::vector<std::pair<std::string, std::string>> xattrs;  // PAX SCHILY.xattr.*, in order
};

// Streams the layer's headers (content is skipped, not hashed) to `visit`, which may stop
// the scan with an error. Reads the blob to its end, so its digest and size are checked.
Status ScanLayer(const oci::Blob& layer, const std::function<Status(const TarHeader&)>& visit);

// Streams the layer once, for an unpacker onto a disk: each header to `visit` with a way
// to read that entry's content (a regular file's blocks, each with its offset: a sparse
// file's holes are skipped, never materialized in memory); content not read is skipped.
// Reads the blob to its end, so its digest and size are checked after the last entry.
using ContentBlock = std::function<Status(uint64_t offset, const void* data, size_t size)>;
using ReadContent = std::function<Status(const ContentBlock& block)>;
Status ExtractLayer(const oci::Blob& layer, const std::function<Status(const TarHeader&, const ReadContent&)>& visit);

// The content of the entry at `ordinal` (a regular file), streaming the layer again and
// checking the whole blob; kInvalidInput when larger than max_bytes.
Result<std::string> ReadLayerEntry(const oci::Blob& layer, uint64_t ordinal, uint64_t max_bytes);

}  // namespace imgtool::archive
