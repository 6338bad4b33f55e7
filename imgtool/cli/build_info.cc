// The only file that includes the generated imgtool_build_info.h (cmake/write_build_info.cmake):
// a new commit recompiles this file and relinks imgtool, nothing else. The toolchain and
// features come as definitions from imgtool/CMakeLists.txt (IMGTOOL_TOOLCHAIN_*, IMGTOOL_FEATURES).
#include "cli/build_info.h"

#include <sstream>

#include "imgtool_build_info.h"

namespace imgtool::cli {

namespace {

// "a=1,b=no" -> {{"a","1"},{"b","no"}}.
std::vector<std::pair<std::string, std::string>> ParseFeatures(const std::string& list) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    size_t eq = item.find('=');
    if (eq != std::string::npos) out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
}

}  // namespace

const BuildInfo& GetBuildInfo() {
  static const BuildInfo info{IMGTOOL_VERSION, IMGTOOL_BUILD_COMMIT, IMGTOOL_TOOLCHAIN_ID, IMGTOOL_TOOLCHAIN_VERSION,
                              ParseFeatures(IMGTOOL_FEATURES)};
  return info;
}

}  // namespace imgtool::cli
