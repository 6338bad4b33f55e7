// Fingerprint: one node's stack as flat "field -> value" strings, split in two halves.
//   fields  must match on every worker (image digest, driver, CUDA/cuBLAS/cuDNN/NCCL
//           versions, GPU model, library hashes, numerics/communication env vars, ...)
//   node    legitimately differs per node (hostname, GPU UUIDs, PCI bus ids); reported,
//           never compared.
// Flat strings keep the comparison trivial and the report readable: a difference is
// "field X: value A on workers 0,2,3; value B on worker 1".
//
// Field names (dotted, lowercase; the values are what the libraries report):
//   platform  "linux/amd64", "linux/arm64": the probe binary's own (compare.h: fields
//             of the binaries are compared within a platform, the rest across all)
//   image.digest  image.index (the multi-platform index, or "unknown")
//   image.stack_json (sha256 of /etc/imgtool/stack.json, or "absent")
//   os.release  os.kernel  os.glibc
//   driver.version  cuda.driver_api  cuda.runtime  cublas  cudnn  nccl
//   gpu.count  gpu.model  gpu.sm_count  gpu.memory_mib  gpu.compute_capability
//   lib.<file name>  sha256 of each CUDA library actually loaded (resolved to the real file)
//   env.<NAME>  NCCL_*, CUDA_*, CUBLAS_*, CUBLASLT_*, CUDNN_*, NVIDIA_TF32_OVERRIDE, ...
//   golden_run.weights  (with --golden-run) the short training's weights digest
// An absent library reports "absent" (the probe runs on nodes without a GPU).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "oci/canonical_json.h"
#include "oci/result.h"

namespace imgtool::fleet {

inline constexpr const char* kPlatformField = "platform";

struct Fingerprint {
  std::map<std::string, std::string> fields;  // must match
  std::map<std::string, std::string> node;    // per node, never compared
};

// Bounds of a fingerprint read from elsewhere (a file, a worker over the network).
inline constexpr size_t kMaxFingerprintEntries = 4096;  // in "fields", and in "node"
inline constexpr size_t kMaxFieldNameBytes = 256;
inline constexpr size_t kMaxFieldValueBytes = 4096;
inline constexpr size_t kMaxFingerprintBytes = 64u << 20;  // the JSON text

// {"fields": {...}, "node": {...}} (keys sorted by nlohmann's map). Values must be valid
// UTF-8 to serialize (the probe escapes what is not).
oci::Json ToJson(const Fingerprint& fp);
// Strict: an object with "fields" (and optionally "node"), each an object of strings;
// anything else is kInvalidInput naming the path ("$.fields.nccl: not a string").
// Bounded: at most 4096 entries each, keys 1..256 bytes, values <= 4096 bytes.
// Other top-level keys (the probe's "timings", ...) are ignored, except "digest": when
// present it must equal FingerprintDigest(fp, {}), or the file was edited (kIntegrity).
Result<Fingerprint> FingerprintFromJson(const std::string& text);

// An --ignore pattern: an exact field name, or a prefix ending in '*' ("env.NCCL_*";
// "*" alone ignores everything).
bool FieldIgnored(const std::string& field, const std::vector<std::string>& ignore);

// "sha256:<hex>" of the canonical JSON of `fields` without the ignored ones. Equal
// digests mean equal compared fields; it is what workers exchange first. Node fields
// never count. (Fields that are not valid UTF-8 have no canonical JSON: they are hashed
// in a length-prefixed form instead, so distinct bytes still give distinct digests.)
std::string FingerprintDigest(const Fingerprint& fp, const std::vector<std::string>& ignore);

}  // namespace imgtool::fleet
