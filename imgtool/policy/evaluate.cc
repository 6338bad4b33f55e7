#include "policy/evaluate.h"

#include <cstdio>

#include "oci/canonical_json.h"
#include "policy/pinned.h"
#include "rootfs/user_arg.h"
#include "rootfs/users.h"

namespace imgtool::policy {

namespace {

RuleResult Pass(const std::string& rule, const std::string& reason) { return {rule, true, reason}; }
RuleResult Deny(const std::string& rule, const std::string& reason) { return {rule, false, reason}; }

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string StackText(const std::map<std::string, std::string>& s) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : s) parts.push_back(k + " " + v);
  return Join(parts, ", ");
}

// nonRoot for a User that is a name: the uid every reader of the image's /etc/passwd
// resolves it to (rootfs/users.h); where they differ, or the file is one they read
// differently, the rule fails with which line each one takes.
RuleResult NonRootByName(const std::string& rule, const std::string& user, const Result<std::string>& passwd) {
  const std::string what = "config User '" + user + "'";
  if (user == "root") return Deny(rule, "config User is 'root'");
  if (!passwd.ok()) {
    if (passwd.error().kind == ErrorKind::kNotFound)
      return Deny(rule, what + " is a name but the image has no /etc/passwd");
    return Deny(rule, what + " is a name; " + passwd.error().message);
  }
  auto file = rootfs::AccountFile::Parse(rootfs::AccountKind::kUser, *passwd);
  if (!file.ok()) return Deny(rule, what + " is a name; " + file.error().message);
  auto found = file->FindName(user);
  if (!found.ok()) return Deny(rule, what + ": " + found.error().message);
  if (!*found) return Deny(rule, what + " is not in the image's /etc/passwd");
  const std::string uid = std::to_string((*found)->id);
  if ((*found)->id == 0) return Deny(rule, what + " is uid 0 in /etc/passwd (" + (*found)->where + ")");
  return Pass(rule, "user '" + user + "' is uid " + uid + " in /etc/passwd (" + (*found)->where + ")");
}

// stack.json's components -> version; an error when it is not the shape builder/stack.cc writes.
Result<std::map<std::string, std::string>> StackJsonVersions(const std::string& text) {
  auto parsed = oci::ParseJsonLenient(text, "/etc/imgtool/stack.json");
  if (!parsed.ok()) return MakeError(ErrorKind::kIntegrity, parsed.error().message);
  const oci::Json& j = *parsed;
  if (j.is_discarded() || !j.is_object() || !j.contains("components") || !j["components"].is_object()) {
    return MakeError(ErrorKind::kIntegrity, "/etc/imgtool/stack.json is not {\"components\": {...}}");
  }
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : j["components"].items()) {
    if (!v.is_object() || !v.contains("version") || !v["version"].is_string()) {
      return MakeError(ErrorKind::kIntegrity, "/etc/imgtool/stack.json: components." + k + " has no version");
    }
    out[k] = v["version"].get<std::string>();
  }
  return out;
}

// The image's stack: org.imgtool.stack.* labels and stack.json must say the same.
Result<std::map<std::string, std::string>> ImageStack(const ImageFacts& f) {
  const std::string prefix = "org.imgtool.stack.";
  std::map<std::string, std::string> labels;
  for (const auto& [k, v] : f.labels) {
    if (k.rfind(prefix, 0) == 0) labels[k.substr(prefix.size())] = v;
  }
  std::map<std::string, std::string> file;
  if (!f.stack_json.ok()) {
    if (f.stack_json.error().kind != ErrorKind::kNotFound) return f.stack_json.error();
    if (!labels.empty()) {
      return MakeError(ErrorKind::kIntegrity,
                       "labels pin " + StackText(labels) + " but the image has no /etc/imgtool/stack.json");
    }
    return labels;
  }
  auto parsed = StackJsonVersions(*f.stack_json);
  if (!parsed.ok()) return parsed.error();
  file = *parsed;
  for (const auto& [k, v] : labels) {
    auto it = file.find(k);
    if (it == file.end())
      return MakeError(ErrorKind::kIntegrity, "label " + prefix + k + "=" + v + " but stack.json has no " + k);
    if (it->second != v) {
      return MakeError(ErrorKind::kIntegrity, "label " + prefix + k + "=" + v + " but stack.json says " + it->second);
    }
  }
  for (const auto& [k, v] : file) {
    if (!labels.count(k))
      return MakeError(ErrorKind::kIntegrity, "stack.json pins " + k + " " + v + " but no label " + prefix + k);
  }
  return file;
}

}  // namespace

// The uid comes from the part before the first ':' for runc, Docker and containerd
// alike (containerd refuses a second ':'); the group never changes it.
RuleResult EvaluateNonRoot(const ImageFacts& f) {
  const std::string rule = "nonRoot";
  std::string user = f.user.substr(0, f.user.find(':'));
  if (f.user.empty()) return Deny(rule, "config User is empty: the container runs as root");
  if (user.empty()) return Deny(rule, "config User '" + f.user + "' names no user: the container runs as root");
  rootfs::UserArg arg = rootfs::ParseUserArg(user);
  switch (arg.kind) {
    case rootfs::UserArg::Kind::kRefused:
      return Deny(rule, "config User '" + f.user + "': " + arg.why);
    case rootfs::UserArg::Kind::kId:
      if (arg.id == 0) return Deny(rule, "config User '" + f.user + "' is uid 0 (root)");
      return Pass(rule, "uid " + std::to_string(arg.id));
    case rootfs::UserArg::Kind::kName:
      break;
  }
  return NonRootByName(rule, user, f.passwd);
}

RuleResult EvaluateDigestPinned(const ImageFacts& f) {
  const std::string rule = "digestPinned";
  auto pinned = ParsePinnedReference(f.reference);
  if (!pinned.ok()) return Deny(rule, pinned.error().message);
  if (pinned->ref.tag == "latest") return Deny(rule, "the reference names the tag 'latest'");
  if (pinned->digest.empty()) {
    std::string tag = pinned->ref.tag.empty() ? "no tag" : "tag '" + pinned->ref.tag + "'";
    return Deny(rule, "not pinned: the reference has " + tag + " and no @sha256:...");
  }
  if (pinned->digest != f.digest) return Deny(rule, "pinned to " + pinned->digest + " but resolved to " + f.digest);
  return Pass(rule, "pinned to " + pinned->digest);
}

RuleResult EvaluateSignedBy(const ImageFacts& f) {
  const std::string rule = "signedBy";
  if (!f.signature.ok()) return Deny(rule, f.signature.error().message);
  std::string why = Join(f.signature->reasons, "; ");
  if (!f.signature->verified) return Deny(rule, why.empty() ? "not verified" : why);
  return Pass(rule, why.empty() ? "verified" : why);
}

RuleResult EvaluateAllowedStacks(const AllowedStacksRule& r, const ImageFacts& f) {
  const std::string rule = "allowedStacks";
  auto stack = ImageStack(f);
  if (!stack.ok()) return Deny(rule, stack.error().message);
  if (stack->empty()) {
    if (r.allow_none) return Pass(rule, "no stack pins (allowNone)");
    return Deny(rule, "the image pins no stack (no org.imgtool.stack.* labels, no components in stack.json)");
  }
  for (size_t i = 0; i < r.stacks.size(); ++i) {
    bool match = true;
    for (const auto& [k, v] : r.stacks[i]) {
      auto it = stack->find(k);
      if (it == stack->end() || it->second != v) match = false;
    }
    if (match) return Pass(rule, StackText(*stack) + " (allowed stack " + std::to_string(i) + ")");
  }
  return Deny(rule, StackText(*stack) + " matches no allowed stack");
}

RuleResult EvaluateRequiredLabels(const std::vector<std::string>& labels, const ImageFacts& f) {
  const std::string rule = "requiredLabels";
  std::vector<std::string> missing;
  for (const auto& l : labels) {
    auto it = f.labels.find(l);
    if (it == f.labels.end() || it->second.empty()) missing.push_back(l);
  }
  if (!missing.empty()) return Deny(rule, "missing or empty: " + Join(missing, ", "));
  return Pass(rule, std::to_string(labels.size()) + " required labels present");
}

RuleResult EvaluateBaseImages(const BaseImagesRule& r, const ImageFacts& f) {
  const std::string rule = "baseImages";
  const std::string digest_key = "org.opencontainers.image.base.digest";
  const std::string name_key = "org.opencontainers.image.base.name";
  auto d = f.annotations.find(digest_key);
  if (d == f.annotations.end()) {
    if (r.allow_scratch) return Pass(rule, "no " + digest_key + " annotation: built from scratch (allowScratch)");
    return Deny(rule, "no " + digest_key + " annotation: the base image is unknown");
  }
  bool allowed = false;
  for (const auto& a : r.allow) allowed = allowed || a == d->second;
  if (!allowed) return Deny(rule, "base " + d->second + " is not in the allowlist");
  if (!r.names.empty()) {
    auto n = f.annotations.find(name_key);
    if (n == f.annotations.end()) return Deny(rule, "no " + name_key + " annotation (the policy allows names)");
    bool named = false;
    for (const auto& a : r.names) named = named || a == n->second;
    if (!named) return Deny(rule, "base name '" + n->second + "' is not in the allowlist");
  }
  return Pass(rule, "base " + d->second + " is allowed");
}

RuleResult EvaluateNoSetuid(const ImageFacts& f) {
  const std::string rule = "noSetuid";
  if (!f.setuid_files.ok()) return Deny(rule, f.setuid_files.error().message);
  if (f.setuid_files->empty()) return Pass(rule, "no setuid/setgid files");
  std::vector<std::string> shown;
  for (const auto& s : *f.setuid_files) {
    if (shown.size() == 5) break;
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", s.mode & 07777);
    shown.push_back("/" + s.path + " (" + mode + ", layer " + s.layer.substr(0, 19) + ")");
  }
  std::string more = f.setuid_files->size() > shown.size()
                         ? " and " + std::to_string(f.setuid_files->size() - shown.size()) + " more"
                         : "";
  return Deny(rule, std::to_string(f.setuid_files->size()) + " setuid/setgid files: " + Join(shown, ", ") + more);
}

RuleResult EvaluateMaxSize(const MaxSizeRule& r, const ImageFacts& f) {
  const std::string rule = "maxSize";
  std::vector<std::string> said;
  if (r.bytes) {
    std::string s = std::to_string(f.compressed_size) + " bytes compressed (limit " + std::to_string(*r.bytes) + ")";
    if (f.compressed_size > *r.bytes) return Deny(rule, s);
    said.push_back(s);
  }
  if (r.uncompressed_bytes) {
    if (!f.uncompressed_size.ok()) return Deny(rule, f.uncompressed_size.error().message);
    std::string s = std::to_string(*f.uncompressed_size) + " bytes uncompressed (limit " +
                    std::to_string(*r.uncompressed_bytes) + ")";
    if (*f.uncompressed_size > *r.uncompressed_bytes) return Deny(rule, s);
    said.push_back(s);
  }
  return Pass(rule, Join(said, ", "));
}

RuleResult EvaluateRule(const Policy& p, const std::string& rule, const ImageFacts& f) {
  if (rule == "nonRoot") return EvaluateNonRoot(f);
  if (rule == "digestPinned") return EvaluateDigestPinned(f);
  if (rule == "signedBy") return EvaluateSignedBy(f);
  if (rule == "allowedStacks" && p.allowed_stacks) return EvaluateAllowedStacks(*p.allowed_stacks, f);
  if (rule == "requiredLabels" && p.required_labels) return EvaluateRequiredLabels(*p.required_labels, f);
  if (rule == "baseImages" && p.base_images) return EvaluateBaseImages(*p.base_images, f);
  if (rule == "noSetuid") return EvaluateNoSetuid(f);
  if (rule == "maxSize" && p.max_size) return EvaluateMaxSize(*p.max_size, f);
  if (rule == "attestations" && p.attestations) return EvaluateAttestations(*p.attestations, f);
  return Deny(rule, "not a rule of this policy");
}

ImageDecision Evaluate(const Policy& p, const ImageFacts& f) {
  ImageDecision d;
  d.reference = f.reference;
  d.digest = f.digest;
  for (const auto& n : p.RuleNames()) {
    d.rules.push_back(f.opened.ok() ? EvaluateRule(p, n, f)
                                    : Deny(n, "cannot open the image: " + f.opened.error().message));
  }
  // No rule at all is no evidence: fail closed rather than pass an empty policy.
  d.pass = !d.rules.empty();
  for (const auto& r : d.rules) d.pass = d.pass && r.pass;
  return d;
}

}  // namespace imgtool::policy
