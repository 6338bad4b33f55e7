// Probe: this node's stack fingerprint. Every CUDA library is loaded with dlopen, so the
// probe runs on a node without a GPU (or without CUDA) and reports what is absent; it
// never links CUDA. What it reads:
//   - the image digest (given: Kubernetes does not expose it inside a pod) and
//     /etc/imgtool/stack.json (written by imgtool build);
//   - /etc/os-release, uname, gnu_get_libc_version;
//   - libcuda.so.1: cuDriverGetVersion, the GPUs (count, name, SM count, memory,
//     compute capability, UUID); /proc/driver/nvidia/version for the driver version;
//   - libcudart (cudaRuntimeGetVersion), libcublas (cublasGetProperty), libcudnn
//     (cudnnGetVersion), libnccl (ncclGetVersion), found by soname the way the trainer
//     would find them (LD_LIBRARY_PATH, the ld.so cache);
//   - the sha256 of every CUDA library mapped into the process after those loads
//     (dl_iterate_phdr, resolved with realpath), hashed in parallel, remembered in a
//     hash cache keyed by (path, device, inode, size, mtime, ctime);
//   - the environment variables that change numerics or communication.
#pragma once

#include <string>
#include <vector>

#include "fleet/fingerprint.h"
#include "oci/result.h"

namespace imgtool::fleet {

struct ProbeOptions {
  std::string image_digest;                                // "" -> "unknown"
  std::string stack_json_path = "/etc/imgtool/stack.json";
  // Where library hashes are remembered; "" disables the cache (every library is hashed).
  std::string hash_cache_dir;
  // The environment to read (NAME=VALUE strings); the process environment when empty.
  std::vector<std::string> environment;
};

struct ProbeTimings {
  double load_ms = 0;  // dlopen and version queries
  double hash_ms = 0;  // library hashes (cache hits cost a stat)
  double total_ms = 0;
  int libraries_hashed = 0;  // not found in the cache
  int libraries_cached = 0;
};

// The default hash cache folder: $XDG_CACHE_HOME/imgtool/probe, else ~/.cache/imgtool/probe.
std::string DefaultHashCacheDir();

// Errors only for what the caller controls (an unreadable stack.json that exists, a
// malformed image digest); a missing library or GPU is a field value, not an error.
Result<Fingerprint> Probe(const ProbeOptions& options, ProbeTimings* timings = nullptr);

// True when `name` is an environment variable the fingerprint records.
bool RecordedEnvVar(const std::string& name);

}  // namespace imgtool::fleet
