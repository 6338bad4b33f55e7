#include "cli/output.h"

namespace imgtool::cli {

Result<std::optional<oci::Platform>> PlatformFlag(const std::string& text) {
  if (text.empty()) return std::optional<oci::Platform>();
  auto p = oci::ParsePlatform(text);
  if (!p.ok()) return p.error().Context("--platform");
  return std::optional<oci::Platform>(*p);
}

}  // namespace imgtool::cli
