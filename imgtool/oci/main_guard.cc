#include "oci/main_guard.h"

#include <cstdio>
#include <exception>

#include "oci/result.h"

namespace imgtool {

int RunGuarded(const char* program, const std::function<int()>& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", program, e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: internal error: an unknown exception\n", program);
  }
  return ExitCodeFor(ErrorKind::kInternal);
}

}  // namespace imgtool
