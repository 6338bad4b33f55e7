// The docker credential-helper protocol, as docker/docker-credential-helpers'
// client/client.go speaks it: `docker-credential-NAME get|store|erase`, with the server
// URL (get, erase) or {"ServerURL","Username","Secret"} (store) on stdin; `get` answers
// that JSON on stdout; a failure exits non-zero with a message on stdout, and the
// message "credentials not found in native keychain" means nothing is stored for that
// server (anonymous, not an error).
//
// Username "<token>" marks the secret as an identity token (an OAuth2 refresh token),
// as docker's native store reads it: Credentials::identity_token carries it and the
// authorizer trades it at the registry's token server (authorizer.h).
//
// Bounds: each call gets $IMGTOOL_CREDENTIAL_HELPER_TIMEOUT seconds (default 30), then
// the helper is killed; at most 1 MiB of output; secrets only on stdin. The helper runs
// in its own process group, killed whole when it exits (child_process.h): a background
// child it leaves behind does not outlive the call.
//
// Errors name the program and the verb, never a secret: the helper's stdout (where `get`
// answers, and where the protocol puts failure messages too) is never quoted; its stderr
// is, only the first line, at most 200 characters, escaped, with the secret we sent
// (`store`) or the one a failed `get` printed cut out, and not at all when that line
// holds a JSON object (an answer printed on stderr carries a secret we cannot know).
//
// Not here: which helper serves a registry (credentials.h reads credHelpers and
// credsStore).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "oci/result.h"
#include "remote/child_process.h"
#include "remote/credentials.h"

namespace imgtool::remote {

// "docker-credential-" + helper.
std::string HelperProgram(const std::string& helper);

// A helper name (a credHelpers or credsStore value) becomes a program name: 1 to
// kMaxHelperName letters, digits, '-', '_' or '.', so no path, no option, and nothing a
// file name cannot hold. kInvalidInput naming it (escaped, cut short) otherwise.
inline constexpr size_t kMaxHelperName = 128;
Status ValidateHelperName(const std::string& helper);

// The default limits, with the timeout from $IMGTOOL_CREDENTIAL_HELPER_TIMEOUT.
Result<ChildLimits> HelperLimits();

// nullopt when the helper has nothing for server_url.
Result<std::optional<Credentials>> HelperGet(const std::string& helper, const std::string& server_url);
Status HelperStore(const std::string& helper, const std::string& server_url, const Credentials& creds);
// false when the helper had nothing for server_url.
Result<bool> HelperErase(const std::string& helper, const std::string& server_url);

}  // namespace imgtool::remote
