// Where registry credentials come from. --creds USER:PASS wins; else the files, in the
// containers' order: --authfile (alone when given), else $REGISTRY_AUTH_FILE,
// $XDG_RUNTIME_DIR/containers/auth.json and ~/.docker/config.json ($DOCKER_CONFIG), each
// in docker's config.json form:
//   {"auths": {"HOST[:PORT]": {"auth": base64("USER:PASS")}},
//    "credHelpers": {"HOST[:PORT]": "NAME"}, "credsStore": "NAME"}
// Within one file we follow docker/cli (configfile/file.go, getConfiguredCredentialStore,
// and its native store): credHelpers[HOST] wins over credsStore, which wins over auths;
// a configured helper's answer is final for that file (the auths entries docker writes
// beside a helper are empty placeholders). A file with nothing for HOST (no entry, or
// the helper's "credentials not found") passes on to the next file, as containers/image
// searches its files; nothing anywhere is anonymous. Helpers: cred_helper.h.
//
// Docker Hub is one registry under three names (docker.io, index.docker.io,
// registry-1.docker.io); docker keys it "https://index.docker.io/v1/" (ServerKey), the
// name helpers are asked for and the auths key `login` writes.
//
// `imgtool login` stores through the helper a file configures for HOST, else writes the
// auths form (mode 0600, every other key kept); `logout` erases the same way.
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
  // An OAuth2 refresh token (a helper's "<token>" user, or auths' "identitytoken"),
  // traded for a Bearer token by the authorizer; username and password are then unused.
  std::string identity_token{};
  // Where they came from ("--creds", a file, docker-credential-NAME) for --debug.
  std::string source{};
};

struct AuthOptions {
  std::string creds;     // "USER:PASS" from --creds; wins over files
  std::string authfile;  // --authfile: the only file read when set
};

// docker.io, index.docker.io, registry-1.docker.io.
bool IsDockerHub(const std::string& host);
// The name docker stores `host` under: "https://index.docker.io/v1/" for Docker Hub,
// else `host` itself.
std::string ServerKey(const std::string& host);

// Files searched for `host`, most specific first.
std::vector<std::string> AuthFileCandidates(const AuthOptions& opts);
// The file `login` writes: --authfile, $REGISTRY_AUTH_FILE, else ~/.docker/config.json.
std::string LoginAuthFile(const AuthOptions& opts);

// Credentials for "host[:port]", or nullopt for anonymous. A malformed file is an error
// naming it (a silent fallback to anonymous would hide the mistake behind a 401).
Result<std::optional<Credentials>> LookupCredentials(const std::string& host, const AuthOptions& opts);

// What one auth file (its bytes, `raw`; `path` names it in errors) says for `host`,
// without running anything: the helper it configures, else the credentials in its
// auths. The file's part of LookupCredentials, apart so it can be tested and fuzzed.
struct AuthFileEntry {
  std::string helper;                      // credHelpers[HOST], else credsStore; "" when none
  std::string helper_field;                // "credHelpers" or "credsStore", for messages
  std::optional<Credentials> credentials;  // from auths, when no helper is configured
};
Result<AuthFileEntry> ParseAuthFile(std::string_view raw, const std::string& path, const std::string& host);

// The helper `path` configures for `host` (credHelpers, else credsStore); "" when none
// or when the file does not exist.
Result<std::string> ConfiguredHelper(const std::string& path, const std::string& host);

Status StoreCredentials(const std::string& path, const std::string& host, const Credentials& creds);
// Removes every auths entry naming `host`. Returns false when there was nothing to remove.
Result<bool> RemoveCredentials(const std::string& path, const std::string& host);

Result<Credentials> ParseCredsFlag(const std::string& user_colon_pass);

}  // namespace imgtool::remote
