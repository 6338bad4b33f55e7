// Writes an OCI image layout (image-spec image-layout.md): oci-layout, index.json,
// blobs/sha256/<hex>. Blobs are written to a temporary name, fsynced and renamed to
// their digest; index.json is rewritten atomically only after every blob it names is
// in place. A killed build therefore never leaves an index that points at a missing
// or partial blob; at worst it leaves an unreferenced blob.
#pragma once

#include <string>
#include <string_view>

#include "fs/atomic_file.h"
#include "oci/digest.h"
#include "oci/manifest.h"
#include "oci/result.h"

namespace imgtool::layout {

// "<dir>/blobs/sha256/<hex>": where a layout keeps a blob.
std::string BlobPathIn(const std::string& dir, const oci::Digest& d);

class LayoutWriter {
 public:
  // Creates the folder and its oci-layout file when missing; refuses a folder that
  // holds something other than an OCI layout.
  static Result<LayoutWriter> Open(const std::string& dir);

  const std::string& dir() const { return dir_; }
  std::string BlobPath(const oci::Digest& d) const;
  bool HasBlob(const oci::Digest& d, int64_t size) const;

  // Small blobs (manifests, configs): written atomically; an existing blob is kept.
  Result<oci::Descriptor> WriteBlob(std::string_view bytes, std::string_view media_type);
  // Large blobs: the caller streams into `file`, then commits it under its digest.
  Status OpenBlobFile(fs::AtomicFile& file) const;
  Status CommitBlob(fs::AtomicFile& file, const oci::Digest& d) const;
  // Places an existing file (a cached blob) as a blob: hard link, else a copy.
  Status ImportBlob(const std::string& path, const oci::Digest& d) const;

  // Points `tag` (org.opencontainers.image.ref.name) at the manifest, replacing any
  // manifest that had the tag. An empty tag adds the manifest untagged.
  Status SetTag(const oci::Descriptor& manifest, const std::string& tag) const;

 private:
  std::string dir_;
};

}  // namespace imgtool::layout
