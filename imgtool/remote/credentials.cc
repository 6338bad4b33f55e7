#include "remote/credentials.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>

#include "fs/atomic_file.h"
#include "oci/base64.h"
#include "oci/canonical_json.h"
#include "oci/quote.h"
#include "remote/cred_helper.h"

namespace imgtool::remote {

namespace {

constexpr char kDockerHubKey[] = "https://index.docker.io/v1/";

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// "https://host:5000/v1/" -> "host:5000", as docker keys its auths.
std::string NormalizeKey(std::string key) {
  auto scheme = key.find("://");
  if (scheme != std::string::npos) key = key.substr(scheme + 3);
  auto slash = key.find('/');
  if (slash != std::string::npos) key = key.substr(0, slash);
  return key;
}

// Whether an auths or credHelpers key (a name, or a URL as older docker wrote them)
// names `host`.
bool KeyNames(const std::string& key, const std::string& host) {
  std::string k = NormalizeKey(key);
  return k == host || (IsDockerHub(k) && IsDockerHub(host));
}

Result<oci::Json> AuthJson(std::string_view raw, const std::string& path) {
  // Lenient: a parse error would quote the text, and an auth file holds secrets.
  auto j = oci::ParseJsonLenient(raw, path);
  if (!j.ok()) return j.error();
  if (j->is_discarded() || !j->is_object()) return MakeError(ErrorKind::kInvalidInput, path + ": not a JSON object");
  return j;
}

Result<oci::Json> ReadAuthFile(const std::string& path) {
  auto raw = fs::ReadSmallFile(path, 1 << 20);
  if (!raw.ok()) return raw.error();
  return AuthJson(*raw, path);
}

Status WriteAuthFile(const std::string& path, const oci::Json& j) {
  IMGTOOL_TRY(fs::MakeDirs(fs::DirName(path)));
  // Created 0600 (never by a chmod of its name afterwards), so the secret is never
  // readable by others, not even before the rename.
  fs::AtomicFile f;
  IMGTOOL_TRY(f.Open(path, 0600));
  IMGTOOL_TRY(f.Chmod(0600));
  IMGTOOL_TRY(f.Write(j.dump(1, '\t') + "\n"));
  return f.Commit();
}

struct HelperChoice {
  std::string name;   // "" when the file configures none for the host
  std::string field;  // "credHelpers" or "credsStore", for messages
};

// The helper a file names, checked before anything runs: a name that cannot be a
// program's (ValidateHelperName) is the file's mistake, kInvalidInput naming it. "" is
// none (docker then uses the auths).
Result<HelperChoice> Chosen(const oci::Json& value, const std::string& path, const std::string& where,
                            const std::string& field) {
  if (!value.is_string()) return MakeError(ErrorKind::kInvalidInput, path + ": " + where + ": want a helper name");
  std::string name = value.get<std::string>();
  if (name.empty()) return HelperChoice{};
  Status valid = ValidateHelperName(name);
  if (!valid.ok()) return valid.error().Context(path + ": " + where);
  return HelperChoice{std::move(name), field};
}

// credHelpers keys: docker looks up its server name (ServerKey), containers/image the
// host; we try both, then any key naming the host.
Result<HelperChoice> HelperIn(const oci::Json& j, const std::string& path, const std::string& host) {
  auto helpers = j.find("credHelpers");
  if (helpers != j.end() && helpers->is_object()) {
    auto it = helpers->find(ServerKey(host));
    if (it == helpers->end()) it = helpers->find(host);
    for (auto k = helpers->begin(); it == helpers->end() && k != helpers->end(); ++k) {
      if (KeyNames(k.key(), host)) it = k;
    }
    if (it != helpers->end()) return Chosen(*it, path, "credHelpers." + oci::Quoted(it.key()), "credHelpers");
  }
  auto store = j.find("credsStore");
  if (store == j.end()) return HelperChoice{};
  return Chosen(*store, path, "credsStore", "credsStore");
}

Result<std::optional<Credentials>> DecodeEntry(const oci::Json& entry, const std::string& path,
                                               const std::string& key) {
  if (!entry.is_object()) return std::optional<Credentials>();
  Credentials c;
  c.identity_token = oci::StringMember(entry, "identitytoken");
  std::string auth = oci::StringMember(entry, "auth");
  if (!auth.empty()) {
    auto decoded = oci::Base64Decode(auth, "auth");
    if (!decoded.ok())
      return MakeError(ErrorKind::kInvalidInput, path + ": auths." + oci::Quoted(key) + ".auth: invalid base64");
    auto colon = decoded->find(':');
    if (colon == std::string::npos) {
      return MakeError(ErrorKind::kInvalidInput,
                       path + ": auths." + oci::Quoted(key) + ".auth: want base64 of USER:PASSWORD");
    }
    c.username = decoded->substr(0, colon);
    c.password = decoded->substr(colon + 1);
  }
  if (auth.empty() && c.identity_token.empty()) return std::optional<Credentials>();
  c.source = path;
  return std::optional<Credentials>(std::move(c));
}

// Exact keys first (the Docker Hub key, then the host), then URL-form keys; an empty
// placeholder entry passes on to the next key.
Result<std::optional<Credentials>> FindInAuths(const oci::Json& j, const std::string& path, const std::string& host) {
  auto auths = j.find("auths");
  if (auths == j.end() || !auths->is_object()) return std::optional<Credentials>();
  std::vector<std::string> keys;
  for (const auto& [key, entry] : auths->items()) {
    if (KeyNames(key, host)) keys.push_back(key);
  }
  auto rank = [&](const std::string& k) { return k == ServerKey(host) ? 0 : k == host ? 1 : 2; };
  std::stable_sort(keys.begin(), keys.end(), [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  for (const auto& key : keys) {
    auto c = DecodeEntry((*auths)[key], path, key);
    if (!c.ok() || c->has_value()) return c;
  }
  return std::optional<Credentials>();
}

Result<AuthFileEntry> EntryFor(const oci::Json& j, const std::string& path, const std::string& host) {
  auto helper = HelperIn(j, path, host);
  if (!helper.ok()) return helper.error();
  AuthFileEntry e{helper->name, helper->field, std::nullopt};
  if (!e.helper.empty()) return e;
  auto c = FindInAuths(j, path, host);
  if (!c.ok()) return c.error();
  e.credentials = std::move(*c);
  return e;
}

Result<std::optional<Credentials>> FromFile(const oci::Json& j, const std::string& path, const std::string& host) {
  auto e = EntryFor(j, path, host);
  if (!e.ok()) return e.error();
  if (e->helper.empty()) return std::move(e->credentials);
  auto c = HelperGet(e->helper, ServerKey(host));
  if (!c.ok()) return c.error().Context("credentials for " + host + " (" + e->helper_field + " in " + path + ")");
  if (c->has_value()) (*c)->source = HelperProgram(e->helper);
  return c;
}

}  // namespace

bool IsDockerHub(const std::string& host) {
  return host == "docker.io" || host == "index.docker.io" || host == "registry-1.docker.io";
}

std::string ServerKey(const std::string& host) { return IsDockerHub(host) ? kDockerHubKey : host; }

Result<Credentials> ParseCredsFlag(const std::string& s) {
  auto colon = s.find(':');
  if (colon == std::string::npos || colon == 0) {
    return MakeError(ErrorKind::kInvalidInput, "--creds: want USER:PASSWORD");
  }
  return Credentials{s.substr(0, colon), s.substr(colon + 1)};
}

std::vector<std::string> AuthFileCandidates(const AuthOptions& opts) {
  if (!opts.authfile.empty()) return {opts.authfile};
  std::vector<std::string> out;
  if (!Env("REGISTRY_AUTH_FILE").empty()) out.push_back(Env("REGISTRY_AUTH_FILE"));
  if (!Env("XDG_RUNTIME_DIR").empty()) out.push_back(Env("XDG_RUNTIME_DIR") + "/containers/auth.json");
  if (!Env("DOCKER_CONFIG").empty()) {
    out.push_back(Env("DOCKER_CONFIG") + "/config.json");
  } else if (!Env("HOME").empty()) {
    out.push_back(Env("HOME") + "/.docker/config.json");
  }
  return out;
}

std::string LoginAuthFile(const AuthOptions& opts) {
  if (!opts.authfile.empty()) return opts.authfile;
  if (!Env("REGISTRY_AUTH_FILE").empty()) return Env("REGISTRY_AUTH_FILE");
  if (!Env("DOCKER_CONFIG").empty()) return Env("DOCKER_CONFIG") + "/config.json";
  return Env("HOME") + "/.docker/config.json";
}

Result<std::optional<Credentials>> LookupCredentials(const std::string& host, const AuthOptions& opts) {
  if (!opts.creds.empty()) {
    auto c = ParseCredsFlag(opts.creds);
    if (!c.ok()) return c.error();
    c->source = "--creds";
    return std::optional<Credentials>(*c);
  }
  for (const auto& path : AuthFileCandidates(opts)) {
    if (!fs::Exists(path)) {
      if (!opts.authfile.empty()) return MakeError(ErrorKind::kNotFound, "--authfile " + path + ": no such file");
      continue;
    }
    auto j = ReadAuthFile(path);
    if (!j.ok()) return j.error();
    auto c = FromFile(*j, path, host);
    if (!c.ok() || c->has_value()) return c;
  }
  return std::optional<Credentials>();
}

Result<AuthFileEntry> ParseAuthFile(std::string_view raw, const std::string& path, const std::string& host) {
  auto j = AuthJson(raw, path);
  if (!j.ok()) return j.error();
  return EntryFor(*j, path, host);
}

Result<std::string> ConfiguredHelper(const std::string& path, const std::string& host) {
  if (!fs::Exists(path)) return std::string();
  auto j = ReadAuthFile(path);
  if (!j.ok()) return j.error();
  auto helper = HelperIn(*j, path, host);
  if (!helper.ok()) return helper.error();
  return helper->name;
}

Status StoreCredentials(const std::string& path, const std::string& host, const Credentials& creds) {
  oci::Json j = oci::Json::object();
  if (fs::Exists(path)) {
    auto existing = ReadAuthFile(path);
    if (!existing.ok()) return existing.error();
    j = *existing;
  }
  if (!j.contains("auths") || !j["auths"].is_object()) j["auths"] = oci::Json::object();
  j["auths"][ServerKey(host)] = {{"auth", oci::Base64Encode(creds.username + ":" + creds.password)}};
  return WriteAuthFile(path, j);
}

Result<bool> RemoveCredentials(const std::string& path, const std::string& host) {
  if (!fs::Exists(path)) return false;
  auto j = ReadAuthFile(path);
  if (!j.ok()) return j.error();
  auto auths = j->find("auths");
  if (auths == j->end() || !auths->is_object()) return false;
  std::vector<std::string> keys;
  for (const auto& [key, entry] : auths->items()) {
    if (KeyNames(key, host)) keys.push_back(key);
  }
  if (keys.empty()) return false;
  for (const auto& key : keys) auths->erase(key);
  IMGTOOL_TRY(WriteAuthFile(path, *j));
  return true;
}

}  // namespace imgtool::remote
