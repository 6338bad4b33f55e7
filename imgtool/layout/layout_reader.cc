#include "layout/layout_reader.h"

#include <sys/stat.h>

#include "fs/atomic_file.h"
#include "oci/image_config.h"
#include "oci/media_types.h"

namespace imgtool::layout {

namespace {

// "sha256-<64 hex>.sbom" and friends: cosign's tag for an artifact about an image.
bool IsReferrerTag(const std::string& tag) {
  static const std::string kPrefix = "sha256-";
  if (tag.rfind(kPrefix, 0) != 0 || tag.size() < kPrefix.size() + 64 + 2) return false;
  if (tag.find_first_not_of("0123456789abcdef", kPrefix.size()) != kPrefix.size() + 64) return false;
  std::string suffix = tag.substr(kPrefix.size() + 64);
  return suffix == ".sbom" || suffix == ".sig" || suffix == ".att";
}

class LayoutLayer : public oci::Layer {
 public:
  LayoutLayer(std::string dir, oci::Descriptor desc, oci::Digest diff_id)
      : dir_(std::move(dir)), desc_(std::move(desc)), diff_id_(std::move(diff_id)) {}
  oci::Digest digest() const override { return desc_.digest; }
  oci::Digest diff_id() const override { return diff_id_; }
  int64_t size() const override { return desc_.size; }
  std::string media_type() const override { return desc_.media_type; }
  Result<std::string> BlobPath() const override {
    std::string p = BlobPathIn(dir_, desc_.digest);
    if (!fs::Exists(p)) return MakeError(ErrorKind::kNotFound, "layer " + desc_.digest.str() + ": blob missing");
    return p;
  }

 private:
  std::string dir_;
  oci::Descriptor desc_;
  oci::Digest diff_id_;
};

class LayoutImage : public oci::Image {
 public:
  std::string raw_manifest_, raw_config_;
  oci::Manifest manifest_;
  oci::Json config_;
  std::vector<std::shared_ptr<const oci::Layer>> layers_;

  const std::string& raw_manifest() const override { return raw_manifest_; }
  const std::string& raw_config() const override { return raw_config_; }
  const oci::Manifest& manifest() const override { return manifest_; }
  const oci::Json& config() const override { return config_; }
  std::vector<std::shared_ptr<const oci::Layer>> layers() const override { return layers_; }
};

}  // namespace

std::string BlobPathIn(const std::string& dir, const oci::Digest& d) { return dir + "/blobs/sha256/" + d.hex(); }

Result<oci::Index> ReadIndex(const std::string& dir) {
  if (!fs::Exists(dir + "/oci-layout")) {
    return MakeError(ErrorKind::kNotFound, dir + ": not an OCI image layout (no oci-layout file)");
  }
  auto raw = fs::ReadSmallFile(dir + "/index.json");
  if (!raw.ok()) return raw.error();
  return oci::ParseIndex(*raw, dir + "/index.json");
}

Result<oci::Descriptor> ResolveManifest(const std::string& dir, const std::string& tag_or_digest) {
  auto index = ReadIndex(dir);
  if (!index.ok()) return index.error();
  const auto& ms = index->manifests;
  const std::string ref_key(oci::kAnnotationRefName);
  if (tag_or_digest.empty()) {
    // Artifacts that refer to an image (an SBOM, a signature) are not a second image:
    // cosign's tags for them ("sha256-<hex>.sbom", ".sig", ".att") are left out here.
    std::vector<const oci::Descriptor*> images;
    for (const auto& d : ms) {
      auto it = d.annotations.find(ref_key);
      if (it == d.annotations.end() || !IsReferrerTag(it->second)) images.push_back(&d);
    }
    if (images.size() == 1) return *images[0];
    std::string tags;
    for (const auto* d : images) {
      auto it = d->annotations.find(ref_key);
      tags += (tags.empty() ? "" : ", ") + (it == d->annotations.end() ? d->digest.Short() : it->second);
    }
    return MakeError(ErrorKind::kInvalidInput,
                     dir + ": holds " + std::to_string(images.size()) + " images; name one with :TAG (" + tags + ")");
  }
  for (const auto& d : ms) {
    auto it = d.annotations.find(ref_key);
    if ((it != d.annotations.end() && it->second == tag_or_digest) || d.digest.str() == tag_or_digest) return d;
  }
  return MakeError(ErrorKind::kNotFound, dir + ": no image tagged '" + tag_or_digest + "'");
}

Result<std::string> ReadVerifiedBlob(const std::string& dir, const oci::Descriptor& desc, int64_t max_bytes) {
  if (desc.size > max_bytes) {
    return MakeError(ErrorKind::kInvalidInput, "blob " + desc.digest.str() + ": " + std::to_string(desc.size) +
                                                   " bytes is more than a " + desc.media_type + " may be");
  }
  auto raw = fs::ReadSmallFile(BlobPathIn(dir, desc.digest), static_cast<uint64_t>(max_bytes));
  if (!raw.ok()) {
    if (raw.error().kind == ErrorKind::kNotFound) {
      return MakeError(ErrorKind::kNotFound, "blob " + desc.digest.str() + " (" + desc.media_type + "): missing");
    }
    return raw.error();
  }
  if (static_cast<int64_t>(raw->size()) != desc.size) {
    return MakeError(ErrorKind::kIntegrity, "blob " + desc.digest.str() + ": size " + std::to_string(raw->size()) +
                                                ", descriptor says " + std::to_string(desc.size));
  }
  oci::Digest actual = oci::Digest::Of(*raw);
  if (actual != desc.digest) {
    return MakeError(ErrorKind::kIntegrity, "blob " + desc.digest.str() + ": content hashes to " + actual.str());
  }
  return raw;
}

Result<std::shared_ptr<const oci::Image>> OpenLayoutImage(const std::string& dir, const std::string& tag_or_digest) {
  auto desc = ResolveManifest(dir, tag_or_digest);
  if (!desc.ok()) return desc.error();
  if (!oci::IsManifestMediaType(desc->media_type)) {
    return MakeError(ErrorKind::kInvalidInput,
                     dir + ": " + desc->digest.str() + " is a " + desc->media_type + ", not an image manifest");
  }
  auto img = std::make_shared<LayoutImage>();
  auto raw_manifest = ReadVerifiedBlob(dir, *desc);
  if (!raw_manifest.ok()) return raw_manifest.error().Context("manifest");
  img->raw_manifest_ = *raw_manifest;
  auto manifest = oci::ParseManifest(img->raw_manifest_, "manifest " + desc->digest.Short());
  if (!manifest.ok()) return manifest.error();
  img->manifest_ = *manifest;
  auto raw_config = ReadVerifiedBlob(dir, img->manifest_.config);
  if (!raw_config.ok()) return raw_config.error().Context("config");
  img->raw_config_ = *raw_config;
  auto config = oci::ParseImageConfig(img->raw_config_, "config " + img->manifest_.config.digest.Short());
  if (!config.ok()) return config.error();
  img->config_ = *config;
  auto diff_ids = oci::ConfigDiffIds(img->config_);
  if (!diff_ids.ok()) return diff_ids.error();
  if (diff_ids->size() != img->manifest_.layers.size()) {
    return MakeError(ErrorKind::kIntegrity, "image " + desc->digest.Short() + ": manifest has " +
                                                std::to_string(img->manifest_.layers.size()) + " layers, config " +
                                                std::to_string(diff_ids->size()) + " diff_ids");
  }
  for (size_t i = 0; i < diff_ids->size(); ++i) {
    img->layers_.push_back(std::make_shared<LayoutLayer>(dir, img->manifest_.layers[i], (*diff_ids)[i]));
  }
  return std::shared_ptr<const oci::Image>(img);
}

}  // namespace imgtool::layout
