// Where registry credentials come from, in the containers' order: --creds USER:PASS,
// then --authfile, else $REGISTRY_AUTH_FILE, $XDG_RUNTIME_DIR/containers/auth.json and
// ~/.docker/config.json ($DOCKER_CONFIG). Files use the shared `auths` form:
//   {"auths": {"HOST[:PORT]": {"auth": base64("USER:PASS")}}}
// `imgtool login` writes the same form, mode 0600, keeping every other key.
//
// Not here: credential helpers (credsStore / credHelpers) are not run.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oci/result.h"

namespace imgtool::remote {

struct Credentials {
  std::string username;
  std::string password;
};

struct AuthOptions {
  std::string creds;     // "USER:PASS" from --creds; wins over files
  std::string authfile;  // --authfile: the only file read when set
};

std::string Base64Encode(std::string_view bytes);
Result<std::string> Base64Decode(std::string_view text);

// Files searched for `host`, most specific first.
std::vector<std::string> AuthFileCandidates(const AuthOptions& opts);
// The file `login` writes: --authfile, $REGISTRY_AUTH_FILE, else ~/.docker/config.json.
std::string LoginAuthFile(const AuthOptions& opts);

// Credentials for "host[:port]", or nullopt for anonymous. A malformed file is an error
// naming it (a silent fallback to anonymous would hide the mistake behind a 401).
Result<std::optional<Credentials>> LookupCredentials(const std::string& host, const AuthOptions& opts);

Status StoreCredentials(const std::string& path, const std::string& host, const Credentials& creds);
// Returns false when there was nothing to remove.
Result<bool> RemoveCredentials(const std::string& path, const std::string& host);

Result<Credentials> ParseCredsFlag(const std::string& user_colon_pass);

}  // namespace imgtool::remote
