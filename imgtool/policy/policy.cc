#include "policy/policy.h"

#include <unistd.h>
#include <algorithm>

#include <cstdlib>
#include <functional>

#include "fs/atomic_file.h"
#include "oci/canonical_json.h"
#include "oci/digest.h"

namespace imgtool::policy {

namespace {

using oci::Json;

Error Bad(const std::string& where, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, where + ": " + why);
}

std::string JoinNames(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

Status WantObject(const Json& j, const std::string& where) {
  if (!j.is_object()) return Bad(where, "want an object");
  return Status::Ok();
}

// Fail closed on typos: a key the policy format does not know is an error, not ignored.
Status OnlyKeys(const Json& j, const std::string& where, const std::vector<std::string>& known) {
  for (const auto& [k, v] : j.items()) {
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      return Bad(where + "." + k, "unknown field (known: " + JoinNames(known) + ")");
    }
  }
  return Status::Ok();
}

Result<std::vector<std::string>> StringList(const Json& j, const std::string& where, bool non_empty) {
  if (!j.is_array()) return Bad(where, "want an array of strings");
  if (non_empty && j.empty()) return Bad(where, "must not be empty");
  std::vector<std::string> out;
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string() || j[i].get<std::string>().empty()) {
      return Bad(where + "[" + std::to_string(i) + "]", "want a non-empty string");
    }
    out.push_back(j[i].get<std::string>());
  }
  return out;
}

Result<bool> Bool(const Json& j, const std::string& where) {
  if (!j.is_boolean()) return Bad(where, "want true or false");
  return j.get<bool>();
}

Result<uint64_t> Bytes(const Json& j, const std::string& where) {
  if (!j.is_number_unsigned()) return Bad(where, "want a non-negative integer (bytes)");
  return j.get<uint64_t>();
}

// A rule without settings: {} (fields would be a mistake).
Status ParseEmpty(const Json& j, const std::string& where) {
  IMGTOOL_TRY(WantObject(j, where));
  return OnlyKeys(j, where, {});
}

std::string Resolved(const std::string& path, const std::string& dir) {
  return path[0] == '/' || dir.empty() ? path : dir + "/" + path;
}

// One of `exact_name` / `regexp_name` (the members named so), a non-empty string; a regexp
// is compiled here (Go's syntax, as cosign's), so a bad one fails the policy, naming where.
Status OneOf(const Json& j, const std::string& where, const char* exact_name, const char* regexp_name,
             std::string* exact, std::optional<regexp::GoRegexp>* pattern) {
  if (j.contains(exact_name) == j.contains(regexp_name)) {
    return Bad(where, std::string("want exactly one of ") + exact_name + " and " + regexp_name);
  }
  const char* name = j.contains(exact_name) ? exact_name : regexp_name;
  if (!j[name].is_string() || j[name].get<std::string>().empty())
    return Bad(where + "." + name, "want a non-empty string");
  const std::string value = j[name].get<std::string>();
  if (name == exact_name) {
    *exact = value;
    return Status::Ok();
  }
  auto compiled = regexp::GoRegexp::Compile(value);
  if (!compiled.ok()) return Bad(where + "." + name, compiled.error().message);
  *pattern = std::move(*compiled);
  return Status::Ok();
}

Result<std::vector<IdentityRule>> Identities(const Json& j, const std::string& where) {
  if (!j.is_array() || j.empty())
    return Bad(where, "want a non-empty array of {issuer|issuerRegExp, subject|subjectRegExp}");
  std::vector<IdentityRule> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    IMGTOOL_TRY(WantObject(j[i], at));
    IMGTOOL_TRY(OnlyKeys(j[i], at, {"issuer", "issuerRegExp", "subject", "subjectRegExp"}));
    IdentityRule r;
    IMGTOOL_TRY(OneOf(j[i], at, "issuer", "issuerRegExp", &r.issuer, &r.issuer_regexp));
    IMGTOOL_TRY(OneOf(j[i], at, "subject", "subjectRegExp", &r.subject, &r.subject_regexp));
    out.push_back(r);
  }
  return out;
}

Result<SignedByRule> SignedBy(const Json& j, const std::string& where, const std::string& dir) {
  IMGTOOL_TRY(WantObject(j, where));
  IMGTOOL_TRY(OnlyKeys(j, where, {"keys", "identities", "trustedRoot"}));
  if (!j.contains("keys") && !j.contains("identities")) {
    return Bad(where, "want keys (trusted public keys, PEM files) or identities (keyless signers), or both");
  }
  SignedByRule r;
  if (j.contains("keys")) {
    auto keys = StringList(j["keys"], where + ".keys", true);
    if (!keys.ok()) return keys.error();
    for (const auto& k : *keys) r.keys.push_back(Resolved(k, dir));
  }
  if (j.contains("identities")) {
    auto ids = Identities(j["identities"], where + ".identities");
    if (!ids.ok()) return ids.error();
    r.identities = *ids;
  }
  if (j.contains("trustedRoot")) {
    if (!j["trustedRoot"].is_string() || j["trustedRoot"].get<std::string>().empty()) {
      return Bad(where + ".trustedRoot", "want the path of a trusted_root.json");
    }
    if (r.identities.empty()) return Bad(where + ".trustedRoot", "only with identities");
    r.trusted_root = Resolved(j["trustedRoot"].get<std::string>(), dir);
  }
  return r;
}

Status ParseSignedBy(const Json& j, const std::string& where, const std::string& dir, Policy& p) {
  auto r = SignedBy(j, where, dir);
  if (!r.ok()) return r.error();
  p.signed_by = std::move(*r);
  return Status::Ok();
}

// cosign's short names, as `imgtool attest --type` takes them (sign::PredicateTypeFor
// holds the same three): a policy may say spdxjson where the attestation says the URI.
Result<std::string> PredicateType(const Json& j, const std::string& where) {
  if (!j.is_string()) return Bad(where, "want a predicate type URI (or spdxjson, spdx, custom)");
  const std::string t = j.get<std::string>();
  if (t == "spdxjson" || t == "spdx") return std::string("https://spdx.dev/Document");
  if (t == "custom") return std::string("https://cosign.sigstore.dev/attestation/v1");
  if (t.rfind("https://", 0) == 0 && t.size() > 8) return t;
  return Bad(where, "'" + t.substr(0, 64) + "' is not a predicate type URI (https://...) or spdxjson, spdx, custom");
}

Result<AttestationRequirement> Requirement(const Json& j, const std::string& where, const std::string& dir,
                                           size_t index) {
  IMGTOOL_TRY(WantObject(j, where));
  IMGTOOL_TRY(OnlyKeys(j, where, {"name", "predicateType", "signedBy", "conditions"}));
  AttestationRequirement r;
  if (!j.contains("predicateType")) return Bad(where + ".predicateType", "required");
  auto type = PredicateType(j["predicateType"], where + ".predicateType");
  if (!type.ok()) return type.error();
  r.predicate_type = *type;
  if (!j.contains("signedBy")) return Bad(where + ".signedBy", "required: who must have signed the attestation");
  auto by = SignedBy(j["signedBy"], where + ".signedBy", dir);
  if (!by.ok()) return by.error();
  r.signed_by = std::move(*by);
  r.name = r.predicate_type + " #" + std::to_string(index);
  if (j.contains("name")) {
    if (!j["name"].is_string() || j["name"].get<std::string>().empty())
      return Bad(where + ".name", "want a non-empty string");
    r.name = j["name"].get<std::string>();
  }
  if (j.contains("conditions")) {
    auto cs = ParseConditions(j["conditions"], where + ".conditions");
    if (!cs.ok()) return cs.error();
    r.conditions = std::move(*cs);
  }
  return r;
}

Status ParseAttestations(const Json& j, const std::string& where, const std::string& dir, Policy& p) {
  if (!j.is_array() || j.empty())
    return Bad(where, "want a non-empty array of {name, predicateType, signedBy, conditions}");
  std::vector<AttestationRequirement> out;
  for (size_t i = 0; i < j.size(); ++i) {
    auto r = Requirement(j[i], where + "[" + std::to_string(i) + "]", dir, i);
    if (!r.ok()) return r.error();
    for (const auto& prior : out) {
      if (prior.name == r->name)
        return Bad(where + "[" + std::to_string(i) + "].name", "'" + r->name + "' names an earlier requirement too");
    }
    out.push_back(std::move(*r));
  }
  p.attestations = std::move(out);
  return Status::Ok();
}

Status ParseAllowedStacks(const Json& j, const std::string& where, Policy& p) {
  IMGTOOL_TRY(WantObject(j, where));
  IMGTOOL_TRY(OnlyKeys(j, where, {"stacks", "allowNone"}));
  AllowedStacksRule r;
  if (j.contains("allowNone")) {
    auto b = Bool(j["allowNone"], where + ".allowNone");
    if (!b.ok()) return b.error();
    r.allow_none = *b;
  }
  if (!j.contains("stacks")) return Bad(where + ".stacks", "required: an array of {component: version}");
  if (!j["stacks"].is_array()) return Bad(where + ".stacks", "want an array of {component: version}");
  if (j["stacks"].empty() && !r.allow_none) return Bad(where + ".stacks", "must not be empty");
  for (size_t i = 0; i < j["stacks"].size(); ++i) {
    const Json& s = j["stacks"][i];
    std::string at = where + ".stacks[" + std::to_string(i) + "]";
    IMGTOOL_TRY(WantObject(s, at));
    IMGTOOL_TRY(OnlyKeys(s, at, StackComponents()));
    if (s.empty()) return Bad(at, "names no component (use allowNone for images without a stack)");
    std::map<std::string, std::string> stack;
    for (const auto& [k, v] : s.items()) {
      if (!v.is_string() || v.get<std::string>().empty()) return Bad(at + "." + k, "want a version string");
      stack[k] = v.get<std::string>();
    }
    r.stacks.push_back(stack);
  }
  p.allowed_stacks = r;
  return Status::Ok();
}

Status ParseRequiredLabels(const Json& j, const std::string& where, Policy& p) {
  IMGTOOL_TRY(WantObject(j, where));
  IMGTOOL_TRY(OnlyKeys(j, where, {"labels"}));
  if (!j.contains("labels")) return Bad(where + ".labels", "required: an array of label names");
  auto labels = StringList(j["labels"], where + ".labels", true);
  if (!labels.ok()) return labels.error();
  p.required_labels = *labels;
  return Status::Ok();
}

Status ParseBaseImages(const Json& j, const std::string& where, Policy& p) {
  IMGTOOL_TRY(WantObject(j, where));
  IMGTOOL_TRY(OnlyKeys(j, where, {"allow", "names", "allowScratch"}));
  BaseImagesRule r;
  if (j.contains("allow")) {
    auto allow = StringList(j["allow"], where + ".allow", false);
    if (!allow.ok()) return allow.error();
    for (size_t i = 0; i < allow->size(); ++i) {
      auto d = oci::Digest::Parse((*allow)[i]);
      if (!d.ok()) return d.error().Context(where + ".allow[" + std::to_string(i) + "]");
    }
    r.allow = *allow;
  }
  if (j.contains("names")) {
    auto names = StringList(j["names"], where + ".names", true);
    if (!names.ok()) return names.error();
    r.names = *names;
  }
  if (j.contains("allowScratch")) {
    auto b = Bool(j["allowScratch"], where + ".allowScratch");
    if (!b.ok()) return b.error();
    r.allow_scratch = *b;
  }
  if (r.allow.empty() && !r.allow_scratch) return Bad(where, "allows nothing: give \"allow\" digests or allowScratch");
  p.base_images = r;
  return Status::Ok();
}

Status ParseMaxSize(const Json& j, const std::string& where, Policy& p) {
  IMGTOOL_TRY(WantObject(j, where));
  IMGTOOL_TRY(OnlyKeys(j, where, {"bytes", "uncompressedBytes"}));
  MaxSizeRule r;
  if (j.contains("bytes")) {
    auto b = Bytes(j["bytes"], where + ".bytes");
    if (!b.ok()) return b.error();
    r.bytes = *b;
  }
  if (j.contains("uncompressedBytes")) {
    auto b = Bytes(j["uncompressedBytes"], where + ".uncompressedBytes");
    if (!b.ok()) return b.error();
    r.uncompressed_bytes = *b;
  }
  if (!r.bytes && !r.uncompressed_bytes) return Bad(where, "want \"bytes\" and/or \"uncompressedBytes\"");
  p.max_size = r;
  return Status::Ok();
}

Status ParseDockerfile(const Json& j, const std::string& where, Policy& p) {
  IMGTOOL_TRY(WantObject(j, where));
  IMGTOOL_TRY(OnlyKeys(j, where, {"fromDigest", "noLatest", "nonRootUser", "addChecksum"}));
  std::map<std::string, bool*> fields = {{"fromDigest", &p.dockerfile.from_digest},
                                         {"noLatest", &p.dockerfile.no_latest},
                                         {"nonRootUser", &p.dockerfile.non_root_user},
                                         {"addChecksum", &p.dockerfile.add_checksum}};
  for (const auto& [k, dst] : fields) {
    if (!j.contains(k)) continue;
    auto b = Bool(j[k], where + "." + k);
    if (!b.ok()) return b.error();
    *dst = *b;
  }
  return Status::Ok();
}

Status ParseRules(const Json& j, const std::string& dir, Policy& p) {
  const std::string where = "$.rules";
  IMGTOOL_TRY(WantObject(j, where));
  using Parser = std::function<Status(const Json&, const std::string&)>;
  const std::vector<std::pair<std::string, Parser>> parsers = {
      {"nonRoot",
       [&](const Json& r, const std::string& w) {
         p.non_root = true;
         return ParseEmpty(r, w);
       }},
      {"digestPinned",
       [&](const Json& r, const std::string& w) {
         p.digest_pinned = true;
         return ParseEmpty(r, w);
       }},
      {"signedBy", [&](const Json& r, const std::string& w) { return ParseSignedBy(r, w, dir, p); }},
      {"allowedStacks", [&](const Json& r, const std::string& w) { return ParseAllowedStacks(r, w, p); }},
      {"requiredLabels", [&](const Json& r, const std::string& w) { return ParseRequiredLabels(r, w, p); }},
      {"baseImages", [&](const Json& r, const std::string& w) { return ParseBaseImages(r, w, p); }},
      {"noSetuid",
       [&](const Json& r, const std::string& w) {
         p.no_setuid = true;
         return ParseEmpty(r, w);
       }},
      {"maxSize", [&](const Json& r, const std::string& w) { return ParseMaxSize(r, w, p); }},
      {"attestations", [&](const Json& r, const std::string& w) { return ParseAttestations(r, w, dir, p); }},
  };
  std::vector<std::string> known;
  for (const auto& [name, parse] : parsers) known.push_back(name);
  for (const auto& [k, v] : j.items()) {
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      return Bad(where + "." + k, "unknown rule (known: " + JoinNames(known) + ")");
    }
  }
  for (const auto& [name, parse] : parsers) {
    if (j.contains(name)) IMGTOOL_TRY(parse(j[name], where + "." + name));
  }
  return Status::Ok();
}

}  // namespace

const std::vector<std::string>& StackComponents() {
  static const std::vector<std::string> names = {"cuda", "cublas", "cudnn", "nccl", "driver"};
  return names;
}

std::vector<std::string> Policy::RuleNames() const {
  std::vector<std::string> out;
  if (non_root) out.emplace_back("nonRoot");
  if (digest_pinned) out.emplace_back("digestPinned");
  if (signed_by) out.emplace_back("signedBy");
  if (allowed_stacks) out.emplace_back("allowedStacks");
  if (required_labels) out.emplace_back("requiredLabels");
  if (base_images) out.emplace_back("baseImages");
  if (no_setuid) out.emplace_back("noSetuid");
  if (max_size) out.emplace_back("maxSize");
  if (attestations) out.emplace_back("attestations");
  return out;
}

Result<Policy> ParsePolicy(const std::string& text, const std::string& dir, const std::string& what) {
  // Duplicate keys are refused too: which of two "maxSize" entries counts would be a guess.
  auto doc = oci::ParseJson(text, what);
  if (!doc.ok()) return MakeError(ErrorKind::kInvalidInput, doc.error().message);
  const Json& j = *doc;
  auto parsed = [&]() -> Result<Policy> {
    IMGTOOL_TRY(WantObject(j, "$"));
    IMGTOOL_TRY(OnlyKeys(j, "$", {"policyVersion", "description", "rules", "dockerfile"}));
    if (!j.contains("policyVersion")) return Bad("$.policyVersion", "required (1)");
    if (!j["policyVersion"].is_number_integer() || j["policyVersion"].get<int64_t>() != 1) {
      return Bad("$.policyVersion", "unsupported version " + j["policyVersion"].dump() + " (want 1)");
    }
    if (j.contains("description") && !j["description"].is_string()) return Bad("$.description", "want a string");
    if (!j.contains("rules") && !j.contains("dockerfile")) return Bad("$", "has neither \"rules\" nor \"dockerfile\"");
    Policy p;
    p.path = what;
    if (j.contains("rules")) IMGTOOL_TRY(ParseRules(j["rules"], dir, p));
    if (j.contains("dockerfile")) IMGTOOL_TRY(ParseDockerfile(j["dockerfile"], "$.dockerfile", p));
    return p;
  }();
  if (!parsed.ok()) return parsed.error().Context(what);
  return parsed;
}

Result<Policy> LoadPolicy(const std::string& path) {
  auto raw = fs::ReadSmallFile(path, 1 << 20);
  if (!raw.ok()) return MakeError(ErrorKind::kInvalidInput, raw.error().message).Context("policy " + path);
  std::string dir = fs::DirName(path);
  if (dir.empty() || dir[0] != '/') {
    char* cwd = getcwd(nullptr, 0);
    std::string base = cwd ? cwd : ".";
    free(cwd);
    dir = dir.empty() || dir == "." ? base : base + "/" + dir;
  }
  return ParsePolicy(*raw, dir, path);
}

}  // namespace imgtool::policy
