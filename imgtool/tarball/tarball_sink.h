// docker-archive:FILE[:NAME:TAG] as a destination: one image, written as skopeo's writer
// writes it (containers/image docker/internal/tarfile), so docker load, podman load,
// skopeo and containerd read it: every layer uncompressed (a docker-archive names layers
// by diff_id, and docker load wants tars) as `<diff_id hex>.tar`, the config's exact
// bytes as `<config hex>.json`, manifest.json naming them with NAME:TAG in RepoTags, and
// `repositories` ({"NAME": {"TAG": "<top diff_id hex>"}}, as Docker 25 writes it) when
// tagged. Not written: the legacy per-layer folders (`<id>/layer.tar`, `json`, `VERSION`)
// that only Docker before 1.10 reads.
//
// The tar is deterministic: members sorted by name, mtime 0, owner 0:0, mode 0644, pax
// headers only where ustar cannot hold a field. Layers are inflated into a private
// staging folder as they stream, each hashed and refused unless it is its diff_id, and
// the tar is written on Commit under a temporary name and renamed over FILE (an existing
// file is replaced whole; skopeo refuses to write over one). What a docker-archive
// cannot hold is refused before anything is written: an index (--platform picks one
// image), an artifact, signatures.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "fs/atomic_file.h"
#include "oci/sink.h"

namespace imgtool::tarball {

class TarballSink : public oci::Sink {
 public:
  // `repo_tag`: "docker.io/library/app:v1", or "" for an untagged image; the one top
  // manifest tag this sink takes (anything else is a signature or an artifact).
  static Result<std::unique_ptr<TarballSink>> Open(const std::string& path, const std::string& name,
                                                   const std::string& repo_tag);
  std::string name() const override { return name_; }
  Result<oci::PutOutcome> PutBlob(const oci::Blob& blob, const std::function<void(uint64_t)>& progress) override;
  Status PutManifest(const oci::Descriptor& d, const std::string& bytes,
                     const std::optional<std::string>& tag) override;
  Status Commit() override;
  void Discard() override {}  // nothing is at FILE before Commit; staging goes with the sink

 private:
  TarballSink(std::string path, std::string name, std::string repo_tag, fs::TempDir staging)
      : path_(std::move(path)), name_(std::move(name)), repo_tag_(std::move(repo_tag)), staging_(std::move(staging)) {}
  Result<oci::PutOutcome> StageLayer(const oci::Blob& blob, const std::function<void(uint64_t)>& progress);
  std::string Staged(const oci::Digest& diff_id) const { return staging_.path() + "/" + diff_id.hex(); }

  struct Image {
    oci::Digest config;
    std::vector<oci::Digest> diff_ids;
  };
  std::string path_, name_, repo_tag_;
  fs::TempDir staging_;
  std::mutex mu_;                                 // PutBlob runs on several threads
  std::map<oci::Digest, std::string> documents_;  // blobs that are not layers (the config)
  std::map<oci::Digest, uint64_t> layers_;        // staged, by diff_id: uncompressed size
  std::optional<Image> image_;
};

}  // namespace imgtool::tarball
