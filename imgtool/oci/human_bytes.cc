#include "oci/human_bytes.h"

#include <cstdio>

namespace imgtool {

std::string HumanBytes(uint64_t n) {
  char buf[32];
  if (n >= 1000000000ull) {
    snprintf(buf, sizeof buf, "%.2f GB", static_cast<double>(n) / 1e9);
  } else if (n >= 1000000ull) {
    snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(n) / 1e6);
  } else if (n >= 1000ull) {
    snprintf(buf, sizeof buf, "%.1f kB", static_cast<double>(n) / 1e3);
  } else {
    snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
  }
  return buf;
}

}  // namespace imgtool
