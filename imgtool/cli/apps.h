// The command trees of imgtool and imgtool-fleet, built without running anything: main
// parses them, and imgtool-docgen walks them into man pages and shell completions, so
// the documentation is generated from the same definitions the parser uses.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string_view>

#include "cli/common.h"

namespace imgtool::cli {

// imgtool: every verb registered; the one CLI11 selects sets `run` during parsing. When
// `verb` (main passes argv[1]) names a verb, only the registration that adds it runs: the
// same tree for that verb, built in a fraction of the time (app.cc).
std::unique_ptr<CLI::App> MakeApp(Action& run, std::string_view verb = {});
// imgtool-fleet: probe and fleet check alone (fleet_app.cc, no libcurl).
std::unique_ptr<CLI::App> MakeFleetApp(Action& run);

// version [--json]: version, commit, toolchain and features (cmd_version.cc).
void AddVersionCommand(CLI::App& app, Action& run);

}  // namespace imgtool::cli
