// `imgtool build`: spec -> plan -> layers (cached) -> config -> manifest -> the output's sink;
// for a multi-platform spec, one image per platform (image_build.h) and an index over them.
// The pipeline is base image (scratch, or pinned in a layout or a registry) -> append the spec's layers
// -> append the metadata layer -> set config (user, env, entrypoint, labels, created
// from SOURCE_DATE_EPOCH) -> staged in the build's blob store (blob_store.h) -> handed to
// transport::OpenSink(output) by transport::Write, the walk `imgtool copy` takes: oci:DIR,
// oci-archive:FILE, docker://HOST/REPO (pushed) or docker-archive:FILE (one image).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "archive/layer.h"
#include "builder/lock.h"
#include "builder/packages.h"
#include "oci/manifest.h"
#include "oci/result.h"
#include "ref/reference.h"
#include "remote/registry.h"

namespace imgtool::build {

struct BuildOptions {
  std::string spec_path;
  ref::Reference output;
  int64_t epoch = 0;                                // SOURCE_DATE_EPOCH
  std::optional<archive::Compression> compression;  // overrides the spec's
  // --platform: build only this platform's image of a multi-platform spec (an image, not
  // an index); for a single-platform spec it must be the spec's platform.
  std::optional<oci::Platform> platform;
  std::string cache_dir;             // empty: no cache
  std::string download_dir;          // where package URLs and registry bases are fetched to (fetch.h, base_image.h)
  remote::RegistryOptions registry;  // for a docker:// base and a docker:// output
  std::string lock_path;             // non-empty: --locked; refuse inputs that differ from this lock
  std::string record_path;           // empty: "<transport::BesidePath(output)>.build.json"
  // The provenance's builder (provenance.h, BuilderFrom): --builder-id, else the CI
  // variables the CLI read (GITHUB_*, GITLAB_CI, CI_*), else a local id.
  std::string builder_id;
  std::map<std::string, std::string> ci_env;
  // Human progress ("layer 2/3 cuda: 1.2 GB of 2.4 GB"); may be empty.
  std::function<void(const std::string&)> progress;
};

struct LayerOutcome {
  std::string name;  // "base", a spec layer's name, or "imgtool-metadata"
  oci::Descriptor descriptor;
  oci::Digest diff_id;
  bool cached = false;
  double seconds = 0;
  // Index-aligned with the planned layer's entries: each file's sha256 as the layer read
  // it (for the lock the provenance lists, without hashing the files again).
  std::vector<oci::Digest> file_digests = {};
};

// An input file of a layer, for the build record.
struct RecordInput {
  std::string layer;
  std::string path;  // relative to the layer root
  oci::Digest digest;
  uint64_t size = 0;
  // An ELF file's compilers (elf_toolchain.h): who built a staged binary.
  std::vector<std::string> toolchain = {};
};

// One image of a build (a multi-platform build writes one per platform).
struct ImageResult {
  oci::Platform platform;
  oci::Descriptor manifest;
  oci::Descriptor config;
  std::vector<LayerOutcome> layers;
  std::vector<PackageRecord> packages;  // every package installed, in spec order
  oci::Digest base_manifest;            // the base's image manifest for the platform; empty for scratch
  std::vector<RecordInput> inputs;      // every input file and package, layer by layer
  Lock lock;                            // the image's inputs as `imgtool lock` names them
};

struct BuildResult {
  // What the output's tag names: the image manifest, or the index of a multi-platform build.
  oci::Descriptor manifest;
  bool is_index = false;
  std::vector<ImageResult> images;  // one per platform, in the spec's order
  std::string output;               // the reference written
  std::string record_path;          // the build record
  std::string sbom_path;            // the SPDX SBOM beside the output (also stored in the layout)
  std::string provenance_path;      // SLSA Provenance v1 beside the output (provenance.h)
  std::string compression;          // "gzip", "zstd", "none"
};

Result<BuildResult> Build(const BuildOptions& options);

}  // namespace imgtool::build
