// oci-archive: a plain tar of an OCI image layout (skopeo's oci-archive transport).
// Ours is deterministic: entries sorted, parents first, mtime 0, uid/gid 0, fixed
// modes, so the same layout always gives the same archive bytes (skopeo's do not).
// Reading extracts into a temporary folder, refusing anything that is not part of a
// layout (absolute paths, "..", links, devices).
#pragma once

#include <memory>
#include <string>

#include "fs/atomic_file.h"
#include "ref/reference.h"
#include "oci/image.h"
#include "oci/result.h"

namespace imgtool::layout {

// Writes the layout folder `dir` as an archive at `archive_path` (atomically).
Status WriteOciArchive(const std::string& dir, const std::string& archive_path);

// Extracts `archive_path` into the existing empty folder `dest`.
Status ExtractOciArchive(const std::string& archive_path, const std::string& dest);

// An image opened from any local reference; keeps an extracted archive alive.
struct OpenedImage {
  std::shared_ptr<const oci::Image> image;
  std::string layout_dir;  // where its blobs are
  std::shared_ptr<fs::TempDir> extracted;
};
Result<OpenedImage> OpenImage(const ref::Reference& ref);

}  // namespace imgtool::layout
