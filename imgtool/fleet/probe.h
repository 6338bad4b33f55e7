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
//     (dl_iterate_phdr, resolved with realpath), plus cuDNN 9's sub-libraries, which
//     cuDNN loads on first use from beside libcudnn.so.9; hashed in parallel, remembered
//     in a hash cache keyed by (path, device, inode, size, mtime, ctime);
//   - the environment variables that change numerics or communication.
//
// Field names are those of fingerprint.h. lib.<name> is keyed by the basename of the
// real file (the name `imgtool build` records in stack.json's `libraries`), its path is
// node field lib.<name>. The node half also holds hostname, gpu.uuid, gpu.pci_bus_id,
// the per-node environment (env.CUDA_VISIBLE_DEVICES, ...) and error.<field> for why a
// field is "absent" (dlerror, a failed cuInit).
//
// It is not a health check: it reads what the stack says about itself, it runs no kernel.
#pragma once

#include <string>
#include <vector>

#include "fleet/fingerprint.h"
#include "oci/result.h"

namespace imgtool::fleet {

struct ProbeOptions {
  std::string image_digest;  // "" -> "unknown"
  std::string image_index;   // the multi-platform index the image came from; "" -> "unknown"
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
  // Why the hash cache was not used or not updated ("ignoring hash cache X: ...").
  std::vector<std::string> notes;
};

// The default hash cache folder: $XDG_CACHE_HOME/imgtool/probe, else ~/.cache/imgtool/probe.
std::string DefaultHashCacheDir();

// Errors only for what the caller controls (an unreadable stack.json that exists, a
// malformed image digest); a missing library or GPU is a field value, not an error.
Result<Fingerprint> Probe(const ProbeOptions& options, ProbeTimings* timings = nullptr);

// Which half of the fingerprint an environment variable goes to, as env.<NAME>:
//   kField  NCCL_*, CUDA_*, CUBLAS_*, CUBLASLT_*, CUDNN_* (algorithms, protocols,
//           workspaces, TF32, determinism), NVIDIA_TF32_OVERRIDE,
//           TORCH_ALLOW_TF32_CUBLAS_OVERRIDE, TF_DETERMINISTIC_OPS,
//           TF_CUDNN_DETERMINISTIC, TF_ENABLE_ONEDNN_OPTS, LD_PRELOAD (code that runs
//           and is not hashed);
//   kNode   per-node by nature: CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES (which GPUs a
//           pod got), NCCL_DEBUG, NCCL_DEBUG_SUBSYS, NCCL_DEBUG_FILE (logging only),
//           LD_LIBRARY_PATH, CUDA_HOME, CUDA_PATH (paths: their effect is measured, as the
//           versions and lib.* hashes);
//   kNone   everything else (HOME, PATH, TF_CONFIG, OMP_NUM_THREADS, ...).
// NCCL_SOCKET_IFNAME and NCCL_IB_HCA are compared: on a fleet whose interfaces are named
// differently per node, pass --ignore env.NCCL_SOCKET_IFNAME to the fleet check.
enum class EnvRole { kNone, kField, kNode };
EnvRole EnvVarRole(const std::string& name);

// True when `name` is an environment variable the fingerprint records (either half).
bool RecordedEnvVar(const std::string& name);

}  // namespace imgtool::fleet
