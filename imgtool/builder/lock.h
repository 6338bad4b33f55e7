// The lock file (imgtool.lock.json): every input of a build (of each platform's image, for
// a multi-platform spec) -- the base image (the
// digest the spec pins and the platform's image manifest it resolves to), each
// package (deb, wheel, installed wheel) and each file taken from a layer root -- with its
// kind, name, version, sha256, size and source. `imgtool lock SPEC` writes it;
// `imgtool build --locked` recomputes it before any output exists and refuses the build,
// naming every input that differs, when anything moved. Keys are sorted and nothing
// host-specific is recorded (sources are as the spec writes them), so locking the same
// inputs from another folder or machine gives the same bytes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "builder/fetch.h"
#include "builder/plan.h"
#include "builder/spec.h"
#include "oci/digest.h"
#include "oci/result.h"
#include "remote/registry.h"

namespace imgtool::build {

struct LockInput {
  std::string layer;    // the spec layer's name; "" for the base image
  std::string kind;     // "base", "deb", "wheel", "installed-wheel", "file"
  std::string name;     // package name; a file's in-image path ("/usr/bin/trainer"); "base"
  std::string version;  // packages only
  oci::Digest sha256;   // the file's; an installed wheel's RECORD; the base's pinned manifest or index
  uint64_t size = 0;
  std::string source;  // URL or path as the spec writes it; a file's path under the layer root;
                       // a registry base's docker://HOST/REPO[:TAG]
  // The base only: the image manifest for the spec's platform (sha256 itself when the pin
  // is an image). A lock written before this was recorded reads it as sha256.
  oci::Digest manifest;
  // A multi-platform spec's lock: the platform whose image takes this input
  // ("linux/arm64"); empty for a single-platform spec.
  std::string platform = {};

  friend bool operator==(const LockInput&, const LockInput&) = default;
};

struct Lock {
  std::vector<LockInput> inputs;  // base, then each layer's packages (spec order) and files (path order)
};

std::string LockFileName();  // "imgtool.lock.json"

// Marks every input with `platform` (a multi-platform spec locks each image's inputs).
void TagPlatform(Lock& lock, const oci::Platform& platform);
// The inputs of `platform`'s image (build --platform --locked, lock --check --platform,
// against a whole lock). A lock of a single-platform spec names no platforms: it is
// returned as it is.
Lock OnlyPlatform(const Lock& lock, const oci::Platform& platform);

// Content digests of a planned layer's file entries, index-aligned with its entries, when
// already known (the layer cache has them); nullopt to hash the sources now.
using KnownDigests = std::function<std::optional<std::vector<oci::Digest>>(size_t layer)>;

// `base_manifest`: the platform's image manifest of the base (empty for scratch).
Result<Lock> MakeLock(const Spec& spec, const oci::Digest& base_manifest, const std::vector<PlannedLayer>& plans,
                      const KnownDigests& known = {});
std::string LockJson(const Lock& lock);  // two-space indented, sorted keys, trailing newline

// `imgtool lock`: loads the spec and, for each of its platforms, opens its base (a registry base from the download
// cache, fetched there when missing), fetches its URLs, stages its packages (checking
// every pin) and hashes its files.
// `platform`: that platform's inputs alone (lock --platform); nullopt: every platform.
Result<Lock> LockSpec(const std::string& spec_path, const FetchOptions& fetch,
                      const remote::RegistryOptions& registry = {},
                      const std::optional<oci::Platform>& platform = std::nullopt);
Result<Lock> ParseLock(std::string_view text, const std::string& name);
Result<Lock> ReadLock(const std::string& path);

// Ok when equal; otherwise an integrity error listing each input that is new, gone or
// different ("layer cuda: wheel nvidia-cudnn-cu13: sha256 locked sha256:.. now sha256:..").
Status CompareLock(const Lock& locked, const Lock& now, const std::string& lock_name);

}  // namespace imgtool::build
