// What the library reads anyway but a person should hear about: a manifest named as one
// media type whose bytes say another of the same kind (read as its bytes say, as skopeo
// and go-containerregistry read it). Library code never prints: it reports here, and
// whoever owns the terminal (the CLI) installs a handler; without one a warning is
// dropped. Thread-safe: verify and copy open manifests on several threads.
//
// Not for errors (those are Results) nor for progress (transport's on_blob).
#pragma once

#include <functional>
#include <string>

namespace imgtool::oci {

using WarningHandler = std::function<void(const std::string& message)>;

// Installs `handler` (an empty one drops warnings) and returns the one it replaces.
WarningHandler SetWarningHandler(WarningHandler handler);

// Hands `message` to the installed handler, if any.
void Warn(const std::string& message);

}  // namespace imgtool::oci
