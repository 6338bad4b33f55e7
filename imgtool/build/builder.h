// `imgtool build`: spec -> plan -> layers (cached) -> config -> manifest -> layout sink.
// The pipeline is base image (scratch, or pinned in a layout or a registry) -> append the spec's layers
// -> append the metadata layer -> set config (user, env, entrypoint, labels, created
// from SOURCE_DATE_EPOCH) -> write to oci:DIR[:TAG] or oci-archive:FILE[:TAG].
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "archive/layer.h"
#include "build/packages.h"
#include "oci/manifest.h"
#include "oci/result.h"
#include "ref/reference.h"
#include "remote/registry.h"

namespace imgtool::build {

struct BuildOptions {
  std::string spec_path;
  ref::Reference output;
  int64_t epoch = 0;  // SOURCE_DATE_EPOCH
  std::optional<archive::Compression> compression;  // overrides the spec's
  std::string cache_dir;  // empty: no cache
  std::string download_dir;          // where package URLs and registry bases are fetched to (fetch.h, base_image.h)
  remote::RegistryOptions registry;  // for a docker:// base
  std::string lock_path;     // non-empty: --locked; refuse inputs that differ from this lock
  std::string record_path;  // empty: "<output path>.build.json"
  // Human progress ("layer 2/3 cuda: 1.2 GB of 2.4 GB"); may be empty.
  std::function<void(const std::string&)> progress;
};

struct LayerOutcome {
  std::string name;  // "base", a spec layer's name, or "imgtool-metadata"
  oci::Descriptor descriptor;
  oci::Digest diff_id;
  bool cached = false;
  double seconds = 0;
};

struct BuildResult {
  oci::Descriptor manifest;
  oci::Descriptor config;
  std::vector<LayerOutcome> layers;
  std::string output;       // the reference written
  std::string record_path;  // the build record
  std::string sbom_path;    // the SPDX SBOM beside the output (also stored in the layout)
  std::vector<PackageRecord> packages;  // every package installed, in spec order
  oci::Digest base_manifest;            // the base's image manifest for the platform; empty for scratch
};

Result<BuildResult> Build(const BuildOptions& options);

}  // namespace imgtool::build
