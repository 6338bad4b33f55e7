#include "remote/cred_helper.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "oci/canonical_json.h"

namespace imgtool::remote {

namespace {

// credentials/error.go of docker-credential-helpers: the one message every helper
// prints (on stdout) for "nothing stored for this server".
constexpr char kNotFoundMessage[] = "credentials not found in native keychain";
constexpr char kTokenUsername[] = "<token>";
constexpr size_t kMaxMessage = 200;

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// The helper's own words for a failure (stdout, where the protocol puts them, else
// stderr): the first line, short and printable, with `secret` cut out, since a helper
// may echo what it was given.
std::string HelperMessage(const ChildResult& r, const std::string& secret) {
  std::string m = Trim(r.out).empty() ? Trim(r.err) : Trim(r.out);
  m = m.substr(0, m.find('\n'));
  const std::string redacted = "<redacted>";
  for (size_t p = secret.empty() ? std::string::npos : m.find(secret); p != std::string::npos;
       p = m.find(secret, p + redacted.size())) {
    m.replace(p, secret.size(), redacted);
  }
  if (m.size() > kMaxMessage) m = m.substr(0, kMaxMessage) + "...";
  for (char& c : m) {
    if (!std::isprint(static_cast<unsigned char>(c))) c = '?';
  }
  return m;
}

bool SaysNotFound(const ChildResult& r) { return r.exit_code != 0 && Trim(r.out) == kNotFoundMessage; }

// The name comes from a config file and becomes a program name: no paths.
Status CheckName(const std::string& helper) {
  bool ok = !helper.empty();
  for (char c : helper) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
  if (ok) return Status::Ok();
  return MakeError(ErrorKind::kInvalidInput,
                   "credential helper \"" + helper + "\": want letters, digits, '-', '_', '.'");
}

// Runs one verb. A non-zero exit is a result here, since each verb reads it differently.
Result<ChildResult> Run(const std::string& helper, const std::string& verb, const std::string& input) {
  IMGTOOL_TRY(CheckName(helper));
  auto limits = HelperLimits();
  if (!limits.ok()) return limits.error();
  auto r = RunChild(HelperProgram(helper), {verb}, input, *limits);
  if (!r.ok()) return r.error().Context(HelperProgram(helper) + " " + verb);
  return r;
}

Error Failed(const std::string& helper, const std::string& verb, const ChildResult& r, const std::string& secret) {
  std::string how =
      r.signal ? "killed by signal " + std::to_string(r.signal) : "exit status " + std::to_string(r.exit_code);
  std::string msg = HelperMessage(r, secret);
  return MakeError(ErrorKind::kTransport,
                   HelperProgram(helper) + " " + verb + ": " + how + (msg.empty() ? "" : ": " + msg));
}

// The answer to `get`. Its text is never quoted in errors: it may hold the secret.
Result<std::optional<Credentials>> ParseAnswer(const std::string& out) {
  oci::Json j = oci::ParseJsonOrDiscarded(out);
  bool ok = j.is_object();
  for (const char* key : {"Username", "Secret"}) ok = ok && (!j.contains(key) || j[key].is_string());
  if (!ok) return MakeError(ErrorKind::kTransport, R"(answer is not the JSON {"ServerURL","Username","Secret"})");
  Credentials c;
  c.username = j.value("Username", std::string());
  c.password = j.value("Secret", std::string());
  if (c.username.empty() && c.password.empty()) return std::optional<Credentials>();
  if (c.username == kTokenUsername) {
    c.identity_token = c.password;
    c.username.clear();
    c.password.clear();
  }
  return std::optional<Credentials>(std::move(c));
}

}  // namespace

std::string HelperProgram(const std::string& helper) { return "docker-credential-" + helper; }

Result<ChildLimits> HelperLimits() {
  ChildLimits limits;
  const char* v = std::getenv("IMGTOOL_CREDENTIAL_HELPER_TIMEOUT");
  if (!v || !*v) return limits;
  char* end = nullptr;
  double s = std::strtod(v, &end);
  if (*end != '\0' || !(s > 0) || s > 86400) {
    return MakeError(ErrorKind::kInvalidInput,
                     std::string("$IMGTOOL_CREDENTIAL_HELPER_TIMEOUT=") + v + ": want seconds, more than 0");
  }
  limits.timeout = std::chrono::milliseconds(std::max<long long>(1, std::llround(s * 1000)));
  return limits;
}

Result<std::optional<Credentials>> HelperGet(const std::string& helper, const std::string& server_url) {
  auto r = Run(helper, "get", server_url);
  if (!r.ok()) return r.error();
  if (SaysNotFound(*r)) return std::optional<Credentials>();
  if (r->exit_code != 0) return Failed(helper, "get", *r, "");
  auto c = ParseAnswer(r->out);
  if (!c.ok()) return c.error().Context(HelperProgram(helper) + " get");
  return c;
}

Status HelperStore(const std::string& helper, const std::string& server_url, const Credentials& creds) {
  oci::Json j = {{"ServerURL", server_url}, {"Username", creds.username}, {"Secret", creds.password}};
  if (!creds.identity_token.empty())
    j = {{"ServerURL", server_url}, {"Username", kTokenUsername}, {"Secret", creds.identity_token}};
  auto input = oci::CanonicalJson(j);
  if (!input.ok()) return MakeError(ErrorKind::kInvalidInput, "credentials for " + server_url + ": not UTF-8");
  auto r = Run(helper, "store", *input);
  if (!r.ok()) return r.error();
  std::string secret = creds.identity_token.empty() ? creds.password : creds.identity_token;
  if (r->exit_code != 0) return Failed(helper, "store", *r, secret);
  return Status::Ok();
}

Result<bool> HelperErase(const std::string& helper, const std::string& server_url) {
  auto r = Run(helper, "erase", server_url);
  if (!r.ok()) return r.error();
  if (SaysNotFound(*r)) return false;
  if (r->exit_code != 0) return Failed(helper, "erase", *r, "");
  return true;
}

}  // namespace imgtool::remote
