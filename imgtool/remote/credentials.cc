#include "remote/credentials.h"

#include <openssl/evp.h>
#include <sys/stat.h>

#include <cstdlib>

#include "fs/atomic_file.h"
#include "oci/canonical_json.h"

namespace imgtool::remote {

namespace {

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

Result<oci::Json> ReadAuthFile(const std::string& path) {
  auto raw = fs::ReadSmallFile(path, 1 << 20);
  if (!raw.ok()) return raw.error();
  oci::Json j = oci::Json::parse(*raw, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return MakeError(ErrorKind::kInvalidInput, path + ": not a JSON object");
  return j;
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  std::string in(text);
  while (!in.empty() && (in.back() == '\n' || in.back() == '\r')) in.pop_back();
  if (in.size() % 4 != 0) return MakeError(ErrorKind::kInvalidInput, "invalid base64");
  std::string out(in.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  if (n < 0) return MakeError(ErrorKind::kInvalidInput, "invalid base64");
  // EVP_DecodeBlock counts padding as output bytes; drop them.
  size_t pad = 0;
  if (!in.empty() && in.back() == '=') ++pad;
  if (in.size() > 1 && in[in.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

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
    return std::optional<Credentials>(*c);
  }
  for (const auto& path : AuthFileCandidates(opts)) {
    if (!fs::Exists(path)) {
      if (!opts.authfile.empty()) return MakeError(ErrorKind::kNotFound, "--authfile " + path + ": no such file");
      continue;
    }
    auto j = ReadAuthFile(path);
    if (!j.ok()) return j.error();
    if (!j->contains("auths") || !(*j)["auths"].is_object()) continue;
    for (const auto& [key, entry] : (*j)["auths"].items()) {
      if (NormalizeKey(key) != host || !entry.is_object()) continue;
      std::string auth = entry.value("auth", std::string());
      if (auth.empty()) continue;
      auto decoded = Base64Decode(auth);
      if (!decoded.ok()) return MakeError(ErrorKind::kInvalidInput, path + ": auths." + key + ".auth: invalid base64");
      auto colon = decoded->find(':');
      if (colon == std::string::npos) {
        return MakeError(ErrorKind::kInvalidInput, path + ": auths." + key + ".auth: want base64 of USER:PASSWORD");
      }
      return std::optional<Credentials>(Credentials{decoded->substr(0, colon), decoded->substr(colon + 1)});
    }
  }
  return std::optional<Credentials>();
}

Status StoreCredentials(const std::string& path, const std::string& host, const Credentials& creds) {
  oci::Json j = oci::Json::object();
  if (fs::Exists(path)) {
    auto existing = ReadAuthFile(path);
    if (!existing.ok()) return existing.error();
    j = *existing;
  }
  if (!j.contains("auths") || !j["auths"].is_object()) j["auths"] = oci::Json::object();
  j["auths"][host] = {{"auth", Base64Encode(creds.username + ":" + creds.password)}};
  IMGTOOL_TRY(fs::MakeDirs(fs::DirName(path)));
  // Write 0600 before the rename, so the secret is never readable by others.
  fs::AtomicFile f;
  IMGTOOL_TRY(f.Open(path));
  if (::chmod(f.temp_path().c_str(), 0600) != 0) return MakeError(ErrorKind::kInternal, "chmod " + f.temp_path());
  IMGTOOL_TRY(f.Write(j.dump(1, '\t') + "\n"));
  return f.Commit();
}

Result<bool> RemoveCredentials(const std::string& path, const std::string& host) {
  if (!fs::Exists(path)) return false;
  auto j = ReadAuthFile(path);
  if (!j.ok()) return j.error();
  if (!j->contains("auths") || !(*j)["auths"].is_object() || !(*j)["auths"].contains(host)) return false;
  (*j)["auths"].erase(host);
  fs::AtomicFile f;
  IMGTOOL_TRY(f.Open(path));
  if (::chmod(f.temp_path().c_str(), 0600) != 0) return MakeError(ErrorKind::kInternal, "chmod " + f.temp_path());
  IMGTOOL_TRY(f.Write(j->dump(1, '\t') + "\n"));
  IMGTOOL_TRY(f.Commit());
  return true;
}

}  // namespace imgtool::remote
