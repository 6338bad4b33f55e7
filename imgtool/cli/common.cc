#include "cli/common.h"

#include <iostream>

namespace imgtool::cli {

int Fail(const Error& e) {
  std::cerr << "imgtool: error: " << e.message << "\n";
  return ExitCodeFor(e.kind);
}

void PrintJson(const oci::Json& j) { std::cout << j.dump(2) << "\n"; }

}  // namespace imgtool::cli
