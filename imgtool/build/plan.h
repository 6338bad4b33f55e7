// Planning turns a spec into the exact, sorted entries of each layer, touching the disk
// only to stat. Every input problem (missing file, '..', a symlink leading out of the
// layer root, setuid bits, two sources for one path) is found here, before any output
// exists, so a failed build leaves nothing behind.
//
// Source rules: `src` is relative to the layer's root; the folders above it must
// resolve (symlinks followed) inside the root; the last component and everything
// below a copied folder are taken as they are: symlinks stay symlinks, never followed.
// Modes are normalized the way git sees files: 0755 if any execute bit, else 0644;
// folders 0755; spec `mode` / `dir_mode` override. Owners are 0:0 unless `owner`.
#pragma once

#include <string>
#include <vector>

#include "archive/layer.h"
#include "build/spec.h"
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
  // each source file's size, mtime, inode and device. Same key -> same blob.
  std::string fingerprint;
};

Result<PlannedLayer> PlanLayer(const LayerSpec& layer);

// Sorts, adds missing parent folders (0755, 0:0) and refuses conflicting duplicates.
Result<std::vector<archive::Entry>> Normalize(std::vector<archive::Entry> entries,
                                              std::vector<std::string>* inputs);

}  // namespace imgtool::build
