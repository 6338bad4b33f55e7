// What every verb shares: error printing with exit codes, JSON output, sizes for humans.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "layout/oci_archive.h"
#include "oci/canonical_json.h"
#include "oci/human_bytes.h"
#include "oci/result.h"
#include "remote/registry.h"

namespace imgtool::cli {

// Each verb registers its flags and sets `run` to the action CLI11 selected.
using Action = std::function<int()>;

// Prints "imgtool: error: <message>" to stderr and returns the category's exit code.
int Fail(const Error& e);
// Pretty JSON on stdout (for people piping to jq; machines get the same keys).
void PrintJson(const oci::Json& j);
// Opens any reference (docker:// fetches manifest + config); errors carry the reference text.
Result<layout::OpenedImage> OpenRef(const std::string& text, const remote::RegistryOptions& remote_opts = {});

void AddBuildCommand(CLI::App& app, Action& run);
void AddLockCommand(CLI::App& app, Action& run);
void AddInspectCommands(CLI::App& app, Action& run);  // inspect, digest
void AddVerifyCommand(CLI::App& app, Action& run);
void AddDiffCommand(CLI::App& app, Action& run);
void AddCopyCommands(CLI::App& app, Action& run);   // copy, push, pull, resolve, tags
void AddLoginCommands(CLI::App& app, Action& run);  // login, logout
void AddSignCommands(CLI::App& app, Action& run);   // keygen, sign, attest
void AddPolicyCommands(CLI::App& app, Action& run); // policy check, lint
void AddAdmissionCommands(CLI::App& app, Action& run);  // admission serve
void AddProbeCommand(CLI::App& app, Action& run);       // probe
void AddFleetCommands(CLI::App& app, Action& run);      // fleet check

}  // namespace imgtool::cli
