// `imgtool verify`: checks every invariant of an image in a layout without trusting
// any of it: index -> manifest -> config -> layers, each blob's size and sha256, media
// types, and each layer's diff_id against its decompressed stream. It collects every
// problem instead of stopping at the first, so one run names all damaged blobs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oci/digest.h"
#include "oci/result.h"

namespace imgtool::check {

struct Problem {
  std::string blob;  // "sha256:..." or "index.json"
  std::string what;  // "missing", "content hashes to sha256:...", ...
};

struct VerifyReport {
  oci::Digest manifest;
  int blobs_checked = 0;
  uint64_t bytes_checked = 0;
  std::vector<Problem> problems;
  bool ok() const { return problems.empty(); }
};

// An error only when nothing could be checked (no layout, unknown tag); damage found
// while checking is reported in VerifyReport::problems.
Result<VerifyReport> VerifyLayoutImage(const std::string& dir, const std::string& tag);

}  // namespace imgtool::check
