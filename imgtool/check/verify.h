// `imgtool verify`: checks every invariant of what a reference names without trusting
// any of it: an index and every child (or the one for a platform), each manifest ->
// config -> layers; each blob's size and sha256, media types, and each tar layer's
// diff_id against its decompressed stream. Artifacts (OCI 1.1) are checked the same way
// but have no diff_ids. It collects every problem instead of stopping at the first, so
// one run names all damaged blobs. It reads through any backend's BlobStore, so a
// registry's blobs are streamed and checked without being stored.
//
// Every blob is re-hashed on every run, and read once per run: however many descriptors
// name a digest (an index naming one image 20,000 times), its bytes are read once and
// each descriptor is judged against what was read (check/stored_blob.h), so the work
// follows the unique content, and every entry that names a damaged blob is still named.
// A layer is decompressed unless this user's own record already holds the diff_id of
// exactly these bytes (archive/known_diff_ids.h, written by build and by earlier
// verifies); VerifyOptions::known left disabled decompresses every layer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "archive/known_diff_ids.h"
#include "oci/digest.h"
#include "oci/image.h"
#include "oci/result.h"

namespace imgtool::check {

struct Problem {
  std::string blob;  // "sha256:..."
  std::string what;  // "missing", "content hashes to sha256:...", ...
};

struct VerifyReport {
  oci::Digest manifest;                // the top manifest or index
  std::string media_type;              // of the top manifest
  std::vector<oci::Digest> manifests;  // every manifest checked (each once), the top first
  int blobs_checked = 0;               // blobs (manifests included) read to their end and hashed
  uint64_t bytes_checked = 0;          // their bytes
  int layers_decompressed = 0;         // diff_id derived now
  int diff_ids_known = 0;              // diff_id from the record of an earlier decompression
  int verdicts_reused = 0;             // descriptors judged by what an earlier read of their digest found
  // What was asked of the store, counted beside it (oci/counting_store.h): every read,
  // failed ones too, and every byte handed out.
  uint64_t reads = 0;
  uint64_t bytes_read = 0;
  std::vector<Problem> problems;
  bool ok() const { return problems.empty(); }
};

struct VerifyOptions {
  archive::KnownDiffIds known;            // disabled: every layer decompressed, nothing recorded
  bool decompress_all = false;            // consult no record, but still record what is derived
  std::optional<oci::Platform> platform;  // an index: check only this child (and the index)
  // Cores to read on (a thread per layer; one left over lets a big layer go on as a
  // pipeline: archive/core_budget.h); 0: those this process may run on (fs::UsableCpus).
  int cpus = 0;
};

// An error only when nothing could be checked (an unsupported media type, an index
// without the platform asked for); damage found while checking is in problems.
Result<VerifyReport> Verify(const oci::BlobStore& store, const oci::Descriptor& top, const VerifyOptions& options = {});

}  // namespace imgtool::check
