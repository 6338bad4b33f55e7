// oci-archive: a plain tar of an OCI image layout (skopeo's oci-archive transport).
// Ours is deterministic: entries sorted, parents first, mtime 0, uid/gid 0, fixed
// modes, so the same layout always gives the same archive bytes (skopeo's do not).
// Reading extracts into a temporary folder, refusing anything that is not part of a
// layout (absolute paths, "..", links, devices).
#pragma once

#include <memory>
#include <string>

#include "fs/atomic_file.h"
#include "fs/dir_lock.h"
#include "layout/layout_sink.h"
#include "oci/image.h"
#include "oci/result.h"

namespace imgtool::layout {

// Writes the layout folder `dir` as an archive at `archive_path` (atomically). Every
// file is opened without following anything and must be regular; every blob is hashed
// as it is archived and must match its name (kIntegrity otherwise, nothing written).
Status WriteOciArchive(const std::string& dir, const std::string& archive_path);

// Extracts `archive_path` into the existing empty folder `dest`.
Status ExtractOciArchive(const std::string& archive_path, const std::string& dest);

// An archive as a destination: the existing archive's content (if any) plus what is
// written, in a temporary layout tarred into place (atomically) on Commit, so writing
// to oci-archive:FILE:TAG adds a tag as writing to oci:DIR:TAG does. The archive's
// folder is locked (fs::DirLock) from Open to Commit or Discard, so concurrent writers
// of one archive take turns instead of each dropping the other's tag.
class ArchiveSink : public LayoutSink {
 public:
  static Result<std::unique_ptr<ArchiveSink>> Open(const std::string& archive_path, const std::string& name);
  Status Commit() override;
  void Discard() override { lock_ = fs::DirLock(); }

 private:
  ArchiveSink(LayoutWriter w, std::string name, std::string path, std::shared_ptr<fs::TempDir> tmp, fs::DirLock lock)
      : LayoutSink(std::move(w), std::move(name)),
        path_(std::move(path)),
        tmp_(std::move(tmp)),
        lock_(std::move(lock)) {}
  std::string path_;
  std::shared_ptr<fs::TempDir> tmp_;
  fs::DirLock lock_;
};

}  // namespace imgtool::layout
