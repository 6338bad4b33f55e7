// Writes an OCI image layout (image-spec image-layout.md): oci-layout, index.json,
// blobs/sha256/<hex>. Blobs are written to a temporary name, fsynced and renamed to
// their digest; index.json is rewritten atomically only after every blob it names is
// in place. A killed build therefore never leaves an index that points at a missing
// or partial blob; at worst it leaves an unreferenced blob.
//
// Shared by concurrent writers (threads, imgtool processes): every temporary name is
// unique (fs::UniqueTempPath) and created without replacing anything, two writers
// placing the same blob rename the same bytes over each other, and every change to
// index.json is one read-modify-write under the layout's lock (UpdateIndex), so no
// writer's tag is lost.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "fs/atomic_file.h"
#include "oci/digest.h"
#include "oci/manifest.h"
#include "oci/reader.h"
#include "oci/result.h"

namespace imgtool::layout {

// "<dir>/blobs/sha256/<hex>": where a layout keeps a blob.
std::string BlobPathIn(const std::string& dir, const oci::Digest& d);

// What ImportBlob may skip: kHash reads the file through its descriptor before linking
// it; kKnownGood links without reading (the caller knows the bytes, by the file's stat
// identity: fs/file_identity.h). A file that must be copied is always hashed as copied.
enum class ContentCheck { kHash, kKnownGood };

struct ImportedBlob {
  bool linked = false;        // hard link to the source's inode; else a copy
  uint64_t bytes_hashed = 0;  // bytes read to check the content
};

class LayoutWriter {
 public:
  // Creates the folder and its oci-layout file when missing, under the layout's lock so
  // that concurrent writers creating one layout agree; refuses a folder that holds
  // something other than an OCI layout.
  static Result<LayoutWriter> Open(const std::string& dir);

  const std::string& dir() const { return dir_; }
  // This writer's Open made the folder (a failed command may remove it: RemoveIfCreated).
  bool created() const { return created_; }
  std::string BlobPath(const oci::Digest& d) const;
  // A regular file of that size is there (a symlink, FIFO or folder is not a blob).
  bool HasBlob(const oci::Digest& d, int64_t size) const;

  // Small blobs (manifests, configs): written atomically; an existing blob is kept.
  Result<oci::Descriptor> WriteBlob(std::string_view bytes, std::string_view media_type);
  // Large blobs: the caller streams into `file`, then commits it under its digest.
  Status OpenBlobFile(fs::AtomicFile& file) const;
  Status CommitBlob(fs::AtomicFile& file, const oci::Digest& d) const;
  // Streams `source` (a CheckedReader: the bytes are checked as they pass) into the blob
  // `d`, renamed into place only when it reached its end without an error. Returns the
  // bytes written; `progress` (may be empty) sees the running count.
  Result<uint64_t> StreamBlob(oci::Reader& source, const oci::Digest& d,
                              const std::function<void(uint64_t)>& progress) const;
  // Places the open file `fd` (a cached blob, another layout's blob, opened with
  // fs::OpenRegularBeneath) as the blob `d`: refused unless it is a regular file of
  // d.size; hard-linked by descriptor (never by name) when nobody but us can write it
  // (fs::OnlyWeCanWrite) and its content is d.digest (hashed unless kKnownGood); else
  // copied and hashed as it is copied. kIntegrity when the bytes are not d.digest.
  Result<ImportedBlob> ImportBlob(int fd, const oci::Descriptor& d, ContentCheck check) const;

  // index.json read, changed by `edit` and written back atomically, holding the layout's
  // lock (fs::DirLock on the folder) throughout: the one way index.json is written.
  Status UpdateIndex(const std::function<Status(oci::Index&)>& edit) const;
  // Points `tag` (org.opencontainers.image.ref.name) at the manifest, replacing any
  // manifest that had the tag. An empty tag adds the manifest untagged.
  Status SetTag(const oci::Descriptor& manifest, const std::string& tag) const;

  // Removes the folder when this writer's Open created it and index.json lists nothing
  // but what this writer (or a copy of it) tagged: decided under the lock, so an image a
  // concurrent writer committed there keeps the folder.
  void RemoveIfCreated() const;

 private:
  // What SetTag committed, shared by the copies of this writer.
  struct Committed {
    std::mutex mu;
    std::set<std::string> entries;  // "tag@digest"
  };

  std::string dir_;
  bool created_ = false;
  std::shared_ptr<Committed> committed_ = std::make_shared<Committed>();
};

}  // namespace imgtool::layout
