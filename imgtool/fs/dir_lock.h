// An exclusive lock on a folder, taken with flock(2) on the folder's own descriptor: it
// adds no file to the folder (an image layout stays exactly what the image-spec says),
// it is released when the holder closes it or dies (no stale lock files after a crash or
// SIGKILL), and it serializes threads of one process as well as processes, because each
// DirLock opens the folder afresh (flock locks belong to the open file description).
//
// Used around read-modify-write updates of shared files: a layout's index.json
// (layout_writer.h), an oci-archive being rewritten (oci_archive.h). It is advisory:
// other tools that write index.json without it (skopeo, umoci) are not held back.
#pragma once

#include <string>

#include "fs/safe_open.h"
#include "oci/result.h"

namespace imgtool::fs {

class DirLock {
 public:
  DirLock() = default;
  DirLock(DirLock&&) noexcept = default;
  DirLock& operator=(DirLock&&) noexcept = default;

  // Waits until this process holds the folder `dir` exclusively. `dir` is followed as
  // named (it is the user's); kNotFound when it does not exist.
  static Result<DirLock> Exclusive(const std::string& dir);
  bool held() const { return fd_.valid(); }

 private:
  UniqueFd fd_;
};

}  // namespace imgtool::fs
