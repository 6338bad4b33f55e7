#include "cuda/loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace trainer::cuda {
namespace {

constexpr const char* kPlugin = "libtrainer_cuda.so";

std::string BesideBinary() {
  std::vector<char> buf(4096);
  ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return "";
  std::string exe(buf.data(), static_cast<size_t>(n));
  size_t slash = exe.rfind('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash + 1) + kPlugin;
}

}  // namespace

Result<const Backend*> LoadBackend() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("TRAINER_CUDA_PLUGIN"); env != nullptr && env[0] != '\0') {
    candidates.emplace_back(env);
  } else {
    if (std::string beside = BesideBinary(); !beside.empty() && access(beside.c_str(), F_OK) == 0) {
      candidates.push_back(beside);
    }
    candidates.emplace_back(kPlugin);
  }
  std::string errors;
  for (const auto& path : candidates) {
    // Never closed: the step runner it creates lives until the process ends.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* e = dlerror();
      errors += (errors.empty() ? "" : "; ") + std::string(e != nullptr ? e : path + ": cannot load");
      continue;
    }
    auto entry = reinterpret_cast<const Backend* (*)()>(dlsym(handle, "trainer_cuda_backend"));
    if (entry == nullptr || entry() == nullptr || entry()->abi != kBackendAbi) {
      return MakeError(ErrorKind::kInvalidInput,
                       "--backend cuda: " + path + " is not a CUDA backend plugin of this build (rebuild both)");
    }
    return entry();
  }
  return MakeError(ErrorKind::kInvalidInput, "--backend cuda: cannot load the CUDA backend plugin: " + errors +
                                                 " (it is built beside the trainer when CUDA is found; use --backend "
                                                 "cpu)");
}

}  // namespace trainer::cuda
