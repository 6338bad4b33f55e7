// One registry repository as a backend: a BlobStore to read from (manifests by digest,
// blobs streamed by RegistryBlobReader) and a Sink to write to (HEAD to skip what is
// there, cross-repository mount within one registry, resumable uploads checked before
// they are committed, manifests as exact bytes). Knows nothing of layouts.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "oci/image.h"
#include "oci/repository.h"
#include "oci/sink.h"
#include "remote/registry.h"
#include "remote/upload.h"

namespace imgtool::remote {

class RemoteStore : public oci::BlobStore {
 public:
  RemoteStore(std::shared_ptr<Registry> reg, std::string repo);
  std::string name() const override;
  Result<std::unique_ptr<oci::Reader>> OpenBlob(const oci::Descriptor& d) const override;
  Result<std::string> ReadManifest(const oci::Descriptor& d) const override;
  const std::shared_ptr<Registry>& registry() const { return reg_; }
  const std::string& repository() const { return repo_; }

 private:
  std::shared_ptr<Registry> reg_;
  std::string repo_;
};

// The repository as an oci::Repository: Open fetches a manifest's bytes once (GET by
// tag or digest, checked by digest when one is named); Resolve asks with HEAD.
class RemoteRepository : public oci::Repository {
 public:
  RemoteRepository(std::shared_ptr<Registry> reg, std::string repo);
  std::string name() const override { return store_->name(); }
  std::string identity() const override { return reg_->host() + "/" + repo_; }
  Result<oci::Descriptor> Resolve(const std::string& tag_or_digest) const override;
  Result<oci::Node> Open(const std::string& tag_or_digest) const override;
  Result<std::vector<std::string>> Tags() const override { return reg_->ListTags(repo_); }
  std::shared_ptr<const oci::BlobStore> store() const override { return store_; }
  // The referrers API (GET /v2/<repo>/referrers/<digest>); the tag schema where the
  // registry has no such API (404).
  Result<std::vector<oci::Descriptor>> Referrers(const oci::Digest& subject,
                                                 const std::string& artifact_type) const override;

 private:
  std::shared_ptr<Registry> reg_;
  std::string repo_;
  std::shared_ptr<RemoteStore> store_;
};

class RegistrySink : public oci::Sink {
 public:
  RegistrySink(std::shared_ptr<Registry> reg, std::string repo, UploadOptions upload);
  std::string name() const override;
  Result<oci::PutOutcome> PutBlob(const oci::Blob& blob, const std::function<void(uint64_t)>& progress) override;
  Status PutManifest(const oci::Descriptor& d, const std::string& bytes,
                     const std::optional<std::string>& tag) override;
  Status Commit() override { return Status::Ok(); }
  void Discard() override {}

 private:
  Result<oci::PutOutcome> Upload(const oci::Blob& blob, const std::function<void(uint64_t)>& progress);

  std::shared_ptr<Registry> reg_;
  std::string repo_;
  UploadOptions upload_;
};

}  // namespace imgtool::remote
