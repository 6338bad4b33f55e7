// The CUDA stack as its libraries report it: each one is dlopen'ed by soname (so
// LD_LIBRARY_PATH and the ld.so cache decide, as they do for the trainer) and asked its
// version; libcuda.so.1 is also asked about the GPUs. Nothing here links CUDA, and no
// failure is an error: a library that does not load is "absent", a call that fails is
// "unknown", and the reason goes to a node field error.<field>.
//
// The handles are never closed: unloading CUDA libraries is not safe, and the lib.*
// hashes (probe_libraries.h) are taken of what these loads mapped.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace imgtool::fleet {

struct StackReport {
  // driver.version cuda.driver_api cuda.runtime cublas cudnn nccl
  // gpu.count gpu.model gpu.sm_count gpu.memory_mib gpu.compute_capability
  std::map<std::string, std::string> fields;
  // gpu.uuid gpu.pci_bus_id (comma-separated, device order), error.<field>
  std::map<std::string, std::string> node;
};

// Loads and asks everything above. driver.version comes from proc_version_path.
StackReport ProbeCudaStack(const std::string& proc_version_path = "/proc/driver/nvidia/version");

// The sonames tried for each versioned library field, first that loads wins.
const std::vector<std::string>& SonamesFor(const std::string& field);
// Opens the first of `names` that loads (a soname, or a path) and asks the version
// `field` names (cuda.runtime, cublas, cudnn, nccl): the version string, "absent" when
// none loads, "unknown" when the query fails; *error says why for the last two.
std::string LibraryVersion(const std::string& field, const std::vector<std::string>& names, std::string* error);

// Version codes as the libraries return them, as dotted strings.
std::string CudaVersionString(int code);      // 13000 -> "13.0" (cuDriverGetVersion, cudaRuntimeGetVersion)
std::string CudnnVersionString(size_t code);  // 91900 -> "9.19.0"; cuDNN 8: 8907 -> "8.9.7"
std::string NcclVersionString(int code);      // 22809 -> "2.28.9"; before 2.9: 2804 -> "2.8.4"
// The version in /proc/driver/nvidia/version's "NVRM version:" line ("580.65.06"), or "".
std::string ParseNvidiaDriverVersion(const std::string& text);

}  // namespace imgtool::fleet
