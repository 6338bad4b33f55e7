// What the image verbs share beyond common.h (errors, JSON): the verb registrations,
// sizes, and the --platform flag. Images are opened through transport/open.h.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>

#include "cli/common.h"
#include "oci/canonical_json.h"
#include "oci/human_bytes.h"
#include "oci/manifest.h"
#include "oci/result.h"
#include "remote/registry.h"
#include "transport/open.h"

namespace imgtool::cli {

// --platform OS/ARCH[/VARIANT] (skopeo's and crane's spelling), parsed.
Result<std::optional<oci::Platform>> PlatformFlag(const std::string& text);

void AddBuildCommand(CLI::App& app, Action& run);
void AddLockCommand(CLI::App& app, Action& run);
void AddInspectCommands(CLI::App& app, Action& run);  // inspect, digest
void AddVerifyCommand(CLI::App& app, Action& run);
void AddVerifyBlobCommand(CLI::App& app, Action& run);  // verify-blob (Sigstore bundles)
void AddDiffCommand(CLI::App& app, Action& run);
void AddCopyCommands(CLI::App& app, Action& run);       // copy, push, pull, resolve, tags
void AddIndexCommands(CLI::App& app, Action& run);      // index create, index append
void AddLoginCommands(CLI::App& app, Action& run);      // login, logout
void AddSignCommands(CLI::App& app, Action& run);       // keygen, sign, attest
void AddPolicyCommands(CLI::App& app, Action& run);     // policy check, lint
void AddAdmissionCommands(CLI::App& app, Action& run);  // admission serve
void AddUnpackCommand(CLI::App& app, Action& run);      // unpack (an OCI runtime bundle)

}  // namespace imgtool::cli
