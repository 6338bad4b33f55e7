// One image of a build, from one platform's resolved spec (spec_platforms.h). Prepare
// finds everything that can be wrong with the image's inputs before any output exists:
// it opens the base (for the spec's platform), fetches package URLs, plans every layer
// (packages checked against their pins) and makes the metadata layer. Write then puts the
// base's layers, each planned layer (from the layer cache where it has it), the config
// and the manifest into a layout, untagged: the caller tags the image or an index.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "archive/known_diff_ids.h"
#include "builder/builder.h"
#include "builder/layer_cache.h"
#include "builder/lock.h"
#include "builder/plan.h"
#include "builder/spec.h"
#include "layout/layout_writer.h"
#include "oci/image.h"
#include "rootfs/image_fs.h"

namespace imgtool::build {

class ImageBuild {
 public:
  static Result<std::unique_ptr<ImageBuild>> Prepare(Spec spec, const BuildOptions& options);

  const Spec& spec() const { return spec_; }
  archive::Compression compression() const { return compression_; }
  // This image's lock entries as its inputs are now: file digests from the layer cache
  // where it has the layer, else read (for --locked, before any output exists).
  Result<Lock> LockNow() const;
  // After `lock` (this image's LockNow, found equal to the lock file) passed: each file
  // input's layer entry must stream the bytes whose digest the lock holds, so a file
  // changed after the check fails the layer (exit 4) instead of entering it unchecked.
  void ExpectLocked(const Lock& lock);
  Result<ImageResult> Write(layout::LayoutWriter& out, const std::string& out_dir);

 private:
  ImageBuild(Spec spec, const BuildOptions& options);
  Status OpenBaseImage();
  Status PlanLayers();
  Status PlanMetadataLayer();
  Result<PlannedLayer> Plan(const LayerSpec& layer, const PlanOptions& options) const;
  oci::Digest LayerKey(const PlannedLayer& plan) const;
  Result<LayerOutcome> AddLayer(const layout::LayoutWriter& out, const PlannedLayer& plan, size_t n, size_t total,
                                ImageResult& result);
  Status CopyBaseLayers(const std::string& out_dir, oci::Manifest& manifest) const;
  oci::Json Config(const std::vector<LayerOutcome>& layers) const;
  void Say(const std::string& line) const;

  Spec spec_;
  const BuildOptions& opt_;
  archive::Compression compression_ = archive::Compression::kGzip;
  LayerCache cache_ = LayerCache::Disabled();
  // Each layer written here is recorded with its diff_id, so verify need not inflate it.
  archive::KnownDiffIds known_;
  std::shared_ptr<const oci::Image> base_;
  std::optional<rootfs::ImageFs> base_fs_;
  std::vector<PlannedLayer> plans_;  // the spec's layers, then the metadata layer
  std::vector<PackageRecord> packages_;
};

// "gzip", "zstd", "none": the build record's and the layer key's name.
const char* CompressionName(archive::Compression c);

}  // namespace imgtool::build
