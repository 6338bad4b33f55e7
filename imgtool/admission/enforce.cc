// --mode: what the webhook answers for a denial (decide.h, Enforce). Rewrites the
// AdmissionReview that Decide wrote; the verdict fields stay as they were, for the logs.
#include <string>
#include <vector>

#include "admission/decide.h"
#include "oci/canonical_json.h"

namespace imgtool::admission {

namespace {

// The API server passes on warnings of up to 256 characters, 4,096 in all (Kubernetes'
// admission webhook documentation); longer ones it cuts or drops, so cut here, whole
// UTF-8 characters only.
constexpr size_t kWarningMax = 256;
constexpr size_t kWarningsTotal = 4096;

std::string Cut(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max - 3;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // not inside a character
  return s.substr(0, n) + "...";
}

oci::Json Warnings(const std::vector<std::string>& violations) {
  oci::Json out = oci::Json::array();
  size_t total = 0;
  for (size_t i = 0; i < violations.size(); ++i) {
    std::string w = Cut(violations[i], kWarningMax);
    if (total + w.size() > kWarningsTotal - 64) {
      out.push_back(std::to_string(violations.size() - i) + " more violation(s) not shown");
      break;
    }
    total += w.size();
    out.push_back(w);
  }
  return out;
}

}  // namespace

std::string EnforcementName(Enforcement e) {
  switch (e) {
    case Enforcement::kEnforce:
      return "enforce";
    case Enforcement::kWarn:
      return "warn";
    case Enforcement::kAudit:
      return "audit";
  }
  return "enforce";
}

Result<Enforcement> ParseEnforcement(const std::string& text) {
  for (auto e : {Enforcement::kEnforce, Enforcement::kWarn, Enforcement::kAudit}) {
    if (text == EnforcementName(e)) return e;
  }
  return MakeError(ErrorKind::kInvalidInput, "--mode '" + text + "': want enforce, warn or audit");
}

Answer Enforce(Answer answer, Enforcement e) {
  if (e == Enforcement::kEnforce || answer.allowed || answer.reason == Reason::kMalformed) return answer;
  auto parsed = oci::ParseJsonLenient(answer.body, "answer");
  if (!parsed.ok() || !parsed->is_object() || !parsed->contains("response")) return answer;  // fail closed
  oci::Json out = *parsed;
  oci::Json& r = out["response"];
  std::string message = r["status"].value("message", "");
  r["allowed"] = true;
  r["status"] = {{"code", 200}, {"message", EnforcementName(e) + " mode, allowed; enforcing would deny: " + message}};
  // A denial with no per-image violation (too many images, an internal error) warns its message.
  if (e == Enforcement::kWarn) {
    r["warnings"] = Warnings(answer.violations.empty() ? std::vector<std::string>{message} : answer.violations);
  }
  answer.body = out.dump();
  answer.enforced = false;
  return answer;
}

}  // namespace imgtool::admission
