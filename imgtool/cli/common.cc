#include "cli/common.h"

#include <iostream>

namespace imgtool::cli {

int ParseAndRun(CLI::App& app, const Action& run, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return run ? run() : 2;
}

int Fail(const Error& e) {
  std::cerr << "imgtool: error: " << e.message << "\n";
  return ExitCodeFor(e.kind);
}

void PrintJson(const oci::Json& j) { std::cout << j.dump(2) << "\n"; }

}  // namespace imgtool::cli
