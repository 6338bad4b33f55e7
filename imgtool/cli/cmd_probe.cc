#include "cli/output.h"

namespace imgtool::cli {
void AddProbeCommand(CLI::App&, Action&) {}
}  // namespace imgtool::cli
