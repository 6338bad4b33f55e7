// A `docker save` tarball opened for reading: the file (held open, read by offset), the
// index of its members and its manifest.json. A tarball compressed as a whole (`docker
// save | gzip`, which docker load and skopeo take) is first inflated into an unlinked
// temporary file, as containers/image does; a plain one is read in place.
//
// Not here: what an image of it looks like as a manifest (saved_image.h), or the
// repository the transports see (tarball_repository.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fs/safe_open.h"
#include "oci/reader.h"
#include "oci/result.h"
#include "tarball/manifest_json.h"
#include "tarball/tar_index.h"

namespace imgtool::tarball {

class SavedArchive {
 public:
  // `path` as the user named it (a symlink is followed, a FIFO or folder refused);
  // `name` ("docker-archive:save.tar") starts every error.
  static Result<std::shared_ptr<const SavedArchive>> Open(const std::string& path, const std::string& name);

  const std::string& name() const { return name_; }
  const std::vector<SavedImage>& images() const { return images_; }
  const TarIndex& index() const { return index_; }
  uint64_t size() const { return size_; }  // of the plain tar
  // A member's whole content, refused past `max_bytes` (manifest.json, a config).
  Result<std::string> ReadMember(const TarMember& m, uint64_t max_bytes, const std::string& what) const;

 private:
  friend std::unique_ptr<oci::Reader> OpenMember(std::shared_ptr<const SavedArchive> archive, const TarMember& m);
  std::string name_;
  fs::UniqueFd fd_;
  uint64_t size_ = 0;
  TarIndex index_;
  std::vector<SavedImage> images_;
};

// A member's content as a stream (pread at its offset: any number of them at once, from
// any thread); the reader keeps the archive open.
std::unique_ptr<oci::Reader> OpenMember(std::shared_ptr<const SavedArchive> archive, const TarMember& m);

}  // namespace imgtool::tarball
