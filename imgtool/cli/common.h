// What every verb shares and needs nothing but oci: the action type, error printing with
// exit codes, JSON output. output.h adds what the image verbs share (opening references),
// which pulls in the registry client; the fleet verbs include only this file, so the
// fleet-only binary (imgtool-fleet, fleet_main.cc) links without libcurl.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

#include "oci/canonical_json.h"
#include "oci/result.h"

namespace imgtool::cli {

// Each verb registers its flags and sets `run` to the action CLI11 selected.
using Action = std::function<int()>;

// Parses argv and runs the selected verb: --help / --version exit 0, a usage error 2.
int ParseAndRun(CLI::App& app, const Action& run, int argc, char** argv);
// Prints "imgtool: error: <message>" to stderr and returns the category's exit code.
int Fail(const Error& e);
// Writes `prefix` + `line` and a newline to stderr in one piece, the line escaped
// (oci::Printable): a name from outside that a message quotes raw still cannot drive the
// terminal. Every line the CLI prints for a person about outside data goes through here
// or Fail.
void PrintLine(const std::string& prefix, const std::string& line);
// Pretty JSON on stdout (for people piping to jq; machines get the same keys).
void PrintJson(const oci::Json& j);

void AddProbeCommand(CLI::App& app, Action& run);   // probe
void AddFleetCommands(CLI::App& app, Action& run);  // fleet check

}  // namespace imgtool::cli
