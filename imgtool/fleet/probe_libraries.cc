#include "fleet/probe_libraries.h"

#include <link.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>

namespace imgtool::fleet {

namespace {

std::string BaseName(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

bool IsRegularFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

int CollectMapped(struct dl_phdr_info* info, size_t, void* data) {
  auto* names = static_cast<std::vector<std::string>*>(data);
  // "" is the program, "linux-vdso.so.1" has no file; a relative LD_LIBRARY_PATH entry
  // gives a relative name (relative to our working folder, which realpath resolves).
  if (info->dlpi_name != nullptr && std::strchr(info->dlpi_name, '/') != nullptr) names->emplace_back(info->dlpi_name);
  return 0;
}

}  // namespace

bool IsCudaLibraryName(std::string_view name) {
  static constexpr std::string_view kPrefixes[] = {"libcuda.so", "libcudart.so",  "libcublas",        "libcudnn",
                                                   "libnccl",    "libnvrtc",      "libnvJitLink",     "libnvidia-",
                                                   "libcufft",   "libcurand",     "libcusparse",      "libcusolver",
                                                   "libcupti",   "libnvToolsExt", "libnvptxcompiler", "libnvblas"};
  for (auto p : kPrefixes) {
    if (name.substr(0, p.size()) == p && name.find(".so") != std::string_view::npos) return true;
  }
  return false;
}

std::vector<LoadedLibrary> MappedCudaLibraries() {
  std::vector<std::string> names;
  ::dl_iterate_phdr(CollectMapped, &names);
  std::vector<LoadedLibrary> out;
  std::set<std::string> seen;
  for (const auto& n : names) {
    std::string real = RealPath(n);
    if (real.empty() || !(IsCudaLibraryName(BaseName(n)) || IsCudaLibraryName(BaseName(real)))) continue;
    if (seen.insert(real).second) out.push_back({n, real});
  }
  return out;
}

std::vector<LoadedLibrary> CudnnSubLibraries(const std::vector<LoadedLibrary>& mapped,
                                             const std::string& ld_library_path) {
  static const std::vector<std::string> kV9 = {
      "graph", "ops", "cnn", "adv", "heuristic", "engines_precompiled", "engines_runtime_compiled"};
  static const std::vector<std::string> kV8 = {"ops_infer", "ops_train", "cnn_infer",
                                               "cnn_train", "adv_infer", "adv_train"};
  std::set<std::string> have;
  for (const auto& m : mapped) have.insert(m.real_path);
  std::vector<LoadedLibrary> out;
  for (const auto& m : mapped) {
    std::string base = BaseName(m.loaded_as);
    const std::vector<std::string>* subs = base == "libcudnn.so.9" ? &kV9 : base == "libcudnn.so.8" ? &kV8 : nullptr;
    if (subs == nullptr) continue;
    std::vector<std::string> dirs;
    std::stringstream path_list(ld_library_path);
    for (std::string d; std::getline(path_list, d, ':');) {
      if (!d.empty()) dirs.push_back(d);
    }
    dirs.push_back(m.loaded_as.substr(0, m.loaded_as.rfind('/')));  // $ORIGIN
    for (const auto& sub : *subs) {
      std::string soname = "libcudnn_" + sub + base.substr(std::string("libcudnn").size());
      for (const auto& d : dirs) {
        std::string candidate = d + "/" + soname;
        if (!IsRegularFile(candidate)) continue;
        std::string real = RealPath(candidate);
        if (!real.empty() && have.insert(real).second) out.push_back({candidate, real});
        break;
      }
    }
  }
  return out;
}

std::string LibFieldName(const LoadedLibrary& lib) { return "lib." + BaseName(lib.real_path); }

}  // namespace imgtool::fleet
