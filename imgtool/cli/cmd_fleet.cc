#include "cli/output.h"

namespace imgtool::cli {
void AddFleetCommands(CLI::App&, Action&) {}
}  // namespace imgtool::cli
