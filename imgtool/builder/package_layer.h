// Warm rebuilds of package layers without unpacking. A layer made only of .debs and
// wheels is fully determined by its packages' pins (sha256, name, version, prefix,
// allow_setuid) plus tool version, compression and epoch, so its cache key is computed
// from the spec alone. What the rest of the build needs from the unpacked packages --
// the dpkg status stanza, shared-library hashes for stack.json, the build notes -- is
// kept beside the cache entry, and a hit skips staging entirely. Each package file is
// still hashed against its pin, so a changed file fails the build as on a cold one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "builder/packages.h"
#include "builder/spec.h"
#include "oci/result.h"

namespace imgtool::build {

// Only debs and wheels (no files, no installed wheels: those are verified file by file).
bool IsPackageOnlyLayer(const LayerSpec& layer);

// The layer's identity from its pins; what a PlannedLayer's fingerprint becomes.
std::string PackageLayerFingerprint(const LayerSpec& layer);

// The records and notes of a planned package layer, for the cache's sidecar.
std::string PackageRecordsJson(const std::vector<PackageRecord>& records, const std::vector<std::string>& notes);

struct CachedPackages {
  std::vector<PackageRecord> records;
  std::vector<std::string> notes;
};
// Parses a sidecar for `layer`, taking `where` and `source` from the spec as it is now;
// nullopt when the sidecar does not fit the layer (a damaged entry is a miss).
std::optional<CachedPackages> ParsePackageRecords(const std::string& json, const LayerSpec& layer);

// Every package file of the layer hashes to its pin, each from one open (a download was
// hashed by fetch from the descriptor it keeps: not read again).
Status CheckPackagePins(const LayerSpec& layer);

}  // namespace imgtool::build
