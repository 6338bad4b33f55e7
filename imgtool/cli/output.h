// What the image verbs share beyond common.h (errors, JSON): opening any reference, sizes.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "cli/common.h"
#include "layout/oci_archive.h"
#include "oci/canonical_json.h"
#include "oci/human_bytes.h"
#include "oci/result.h"
#include "remote/registry.h"

namespace imgtool::cli {

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

}  // namespace imgtool::cli
