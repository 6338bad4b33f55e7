// What `imgtool version` reports: fixed when imgtool is built (build_info.cc).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace imgtool::cli {

struct BuildInfo {
  std::string version;   // the project's (CMakeLists.txt)
  std::string commit;    // full hash, "-dirty" with uncommitted changes, or "unknown"
  std::string compiler;  // CMake's compiler id: GNU, Clang
  std::string compiler_version;
  // In a fixed order: "yes"/"no" for parts that may be left out of a build, a version for
  // the libraries whose version changes what imgtool writes or accepts.
  std::vector<std::pair<std::string, std::string>> features;
};

const BuildInfo& GetBuildInfo();

}  // namespace imgtool::cli
