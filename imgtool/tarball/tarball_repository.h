// docker-archive:FILE as an oci::Repository: each image of manifest.json opened as the
// manifest skopeo makes up for it (saved_image.h), its blobs served from the tarball in
// place: the config from memory, each layer from its member (inflated when compressed).
//
// Names, as containers/image takes them: "" the only image (several are an error that
// lists them), "@N" the N-th, "NAME:TAG" the image whose RepoTags hold that name once
// both are normalised (busybox = docker.io/library/busybox). Signatures have no place
// in a docker-archive: every sha256-<hex> tag is simply not found. Errors about the image
// asked for do not repeat the archive's name: the caller names the reference.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "oci/repository.h"
#include "tarball/saved_archive.h"
#include "tarball/saved_image.h"

namespace imgtool::tarball {

// The blobs of the images opened so far (shared by them; OpenBlob from any thread).
class TarballStore : public oci::BlobStore {
 public:
  explicit TarballStore(std::shared_ptr<const SavedArchive> archive) : archive_(std::move(archive)) {}
  std::string name() const override { return archive_->name(); }
  Result<std::unique_ptr<oci::Reader>> OpenBlob(const oci::Descriptor& d) const override;
  // The made-up manifest of image `index`, made once.
  Result<oci::Descriptor> Image(size_t index) const;

 private:
  std::shared_ptr<const SavedArchive> archive_;
  mutable std::mutex mu_;
  mutable std::map<size_t, oci::Descriptor> images_;
  mutable std::map<oci::Digest, std::string> documents_;  // manifests and configs
  mutable std::map<oci::Digest, SavedLayer> layers_;      // by diff_id
};

class TarballRepository : public oci::Repository {
 public:
  TarballRepository(const std::shared_ptr<const SavedArchive>& archive, std::string identity)
      : archive_(archive), store_(std::make_shared<TarballStore>(archive)), identity_(std::move(identity)) {}
  std::string name() const override { return archive_->name(); }
  std::string identity() const override { return identity_; }
  Result<oci::Descriptor> Resolve(const std::string& name) const override;
  Result<oci::Node> Open(const std::string& name) const override;
  // Every RepoTag that is a valid name, normalised ("docker.io/library/app:v1"), sorted.
  Result<std::vector<std::string>> Tags() const override;
  std::shared_ptr<const oci::BlobStore> store() const override { return store_; }

 private:
  Result<size_t> Select(const std::string& name) const;

  std::shared_ptr<const SavedArchive> archive_;
  std::shared_ptr<TarballStore> store_;
  std::string identity_;
};

// `name` starts messages ("docker-archive:save.tar"); `identity` is what a signature
// would name (the file's name).
Result<std::shared_ptr<TarballRepository>> OpenTarballRepository(const std::string& path, const std::string& name,
                                                                 const std::string& identity);

}  // namespace imgtool::tarball
