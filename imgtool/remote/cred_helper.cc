#include "remote/cred_helper.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "oci/canonical_json.h"
#include "oci/quote.h"

namespace imgtool::remote {

namespace {

// credentials/error.go of docker-credential-helpers: the one message every helper
// prints (on stdout) for "nothing stored for this server".
constexpr char kNotFoundMessage[] = "credentials not found in native keychain";
constexpr char kTokenUsername[] = "<token>";
constexpr size_t kMaxMessage = 200;
constexpr size_t kShownName = 40;  // of a refused helper name, in its message

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// Cuts every occurrence of `secret` out of `m`.
void Redact(std::string& m, const std::string& secret) {
  const std::string redacted = "<redacted>";
  for (size_t p = secret.empty() ? std::string::npos : m.find(secret); p != std::string::npos;
       p = m.find(secret, p + redacted.size())) {
    m.replace(p, secret.size(), redacted);
  }
}

// The helper's own words for a failure: the first line of its stderr, short, escaped,
// with every secret we know cut out. Never its stdout: that is where `get` answers, and a
// helper that prints its answer and then fails would put the secret in our message. A
// line holding a JSON object ('{') is not shown either: it may be that answer, printed
// on stderr, with a secret we cannot know to cut. "" when there is nothing to show.
std::string HelperMessage(const ChildResult& r, const std::vector<std::string>& secrets) {
  std::string m = Trim(r.err);
  m = Trim(m.substr(0, m.find('\n')));
  if (m.find('{') != std::string::npos) return "(its message is not shown: it may hold a secret)";
  for (const auto& s : secrets) Redact(m, s);
  if (m.size() > kMaxMessage) m = m.substr(0, kMaxMessage) + "...";
  return oci::Printable(m);
}

bool SaysNotFound(const ChildResult& r) { return r.exit_code != 0 && Trim(r.out) == kNotFoundMessage; }

// Runs one verb. A non-zero exit is a result here, since each verb reads it differently.
Result<ChildResult> Run(const std::string& helper, const std::string& verb, const std::string& input) {
  IMGTOOL_TRY(ValidateHelperName(helper));
  auto limits = HelperLimits();
  if (!limits.ok()) return limits.error();
  auto r = RunChild(HelperProgram(helper), {verb}, input, *limits);
  if (!r.ok()) return r.error().Context(HelperProgram(helper) + " " + verb);
  return r;
}

Error Failed(const std::string& helper, const std::string& verb, const ChildResult& r,
             const std::vector<std::string>& secrets) {
  std::string how =
      r.signal ? "killed by signal " + std::to_string(r.signal) : "exit status " + std::to_string(r.exit_code);
  std::string msg = HelperMessage(r, secrets);
  return MakeError(ErrorKind::kTransport,
                   HelperProgram(helper) + " " + verb + ": " + how + (msg.empty() ? "" : ": " + msg));
}

// The secrets in what a failed `get` printed on stdout, if it reads as an answer: cut
// from its stderr too, where a helper may have repeated them.
std::vector<std::string> SecretsIn(const std::string& out) {
  oci::Json j = oci::ParseJsonOrDiscarded(out);
  std::vector<std::string> secrets;
  if (j.is_object() && j.contains("Secret") && j["Secret"].is_string()) secrets.push_back(j["Secret"]);
  return secrets;
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

Status ValidateHelperName(const std::string& helper) {
  bool ok = !helper.empty() && helper.size() <= kMaxHelperName;
  for (char c : helper) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
  if (ok) return Status::Ok();
  std::string shown = helper.size() <= kShownName ? oci::Quoted(helper)
                                                  : oci::Quoted(helper.substr(0, kShownName)) + "... (" +
                                                        std::to_string(helper.size()) + " characters)";
  return MakeError(ErrorKind::kInvalidInput, "credential helper " + shown + ": want 1 to " +
                                                 std::to_string(kMaxHelperName) + " letters, digits, '-', '_' or '.'");
}

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
  if (r->exit_code != 0) return Failed(helper, "get", *r, SecretsIn(r->out));
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
  if (r->exit_code != 0) return Failed(helper, "store", *r, {secret});
  return Status::Ok();
}

Result<bool> HelperErase(const std::string& helper, const std::string& server_url) {
  auto r = Run(helper, "erase", server_url);
  if (!r.ok()) return r.error();
  if (SaysNotFound(*r)) return false;
  if (r->exit_code != 0) return Failed(helper, "erase", *r, {});
  return true;
}

}  // namespace imgtool::remote
