// Planning turns a spec into the exact, sorted entries of each layer, touching the disk
// only to stat. Every input problem (missing file, '..', a symlink leading out of the
// layer root, setuid bits, two sources for one path) is found here, before any output
// exists, so a failed build leaves nothing behind.
//
// Source rules: `src` is relative to the layer's root; the folders above it must
// resolve (symlinks followed) inside the root; the last component and everything
// below a copied folder are taken as they are: symlinks stay symlinks, never followed.
// The layer reads each file the same way later (archive::Entry::source_root is the
// layer's resolved root: nothing below it is followed), so a folder swapped for a
// symlink after planning is refused, not read through.
// Modes are normalized the way git sees files: 0755 if any execute bit, else 0644;
// folders 0755; spec `mode` / `dir_mode` override. Owners are 0:0 unless `owner`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "archive/layer.h"
#include "builder/packages.h"
#include "builder/spec.h"
#include "oci/digest.h"
#include "oci/result.h"

namespace imgtool::build {

struct PlannedLayer {
  std::string name;
  std::vector<archive::Entry> entries;  // sorted, parents first, no duplicates
  // Index-aligned with entries: the source path relative to the layer root, for the
  // build record ("" for folders, links and generated files).
  std::vector<std::string> inputs;
  uint64_t content_bytes = 0;
  // Identifies the layer's inputs without reading them: every entry's metadata plus
  // each source file's size, mtime, inode and device (a package's files: its sha256).
  // Same key -> same blob.
  std::string fingerprint;
  // The layer's packages (debs, wheels, installed wheels), in spec order.
  std::vector<PackageRecord> packages;
  std::vector<std::string> notes;  // for the build output (maintainer scripts not run)
  // A package-only layer found in the cache: no entries, only its records (package_layer.h).
  bool prebuilt = false;
  // The layer's packages go to the cache beside its blob (package_layer.h).
  bool keep_package_records = false;
  // Unpacked packages the entries stream from: kept alive until the layer is written.
  std::vector<std::shared_ptr<fs::TempDir>> staging;
};

struct PlanOptions {
  std::string staging_parent;  // where packages are unpacked; "" for $TMPDIR
};

// Packages are unpacked (and so read) here; every other source is only stat'ed.
// Debs go to "/" with their modes and dpkg's info/<pkg>.list and .md5sums; wheels go
// under their prefix; owners are 0:0.
Result<PlannedLayer> PlanLayer(const LayerSpec& layer, const PlanOptions& options = {});

// Sorts, adds missing parent folders (0755, 0:0) and refuses conflicting duplicates.
Result<std::vector<archive::Entry>> Normalize(std::vector<archive::Entry> entries, std::vector<std::string>* inputs);

}  // namespace imgtool::build
