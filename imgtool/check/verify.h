// `imgtool verify`: checks every invariant of an image in a layout without trusting
// any of it: index -> manifest -> config -> layers, each blob's size and sha256, media
// types, and each layer's diff_id against its decompressed stream. It collects every
// problem instead of stopping at the first, so one run names all damaged blobs.
//
// Every blob is re-hashed on every run. A layer is decompressed unless this user's own
// record already holds the diff_id of exactly these bytes (archive/known_diff_ids.h,
// written by build and by earlier verifies); VerifyOptions::known left disabled
// decompresses every layer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "archive/known_diff_ids.h"
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
  int layers_decompressed = 0;  // diff_id derived now
  int diff_ids_known = 0;       // diff_id from the record of an earlier decompression
  std::vector<Problem> problems;
  bool ok() const { return problems.empty(); }
};

// An error only when nothing could be checked (no layout, unknown tag); damage found
// while checking is reported in VerifyReport::problems.
struct VerifyOptions {
  archive::KnownDiffIds known;  // disabled: every layer decompressed, nothing recorded
  bool decompress_all = false;  // consult no record, but still record what is derived
};
Result<VerifyReport> VerifyLayoutImage(const std::string& dir, const std::string& tag,
                                       const VerifyOptions& options = {});

}  // namespace imgtool::check
