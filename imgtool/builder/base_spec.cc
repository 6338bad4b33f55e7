#include "builder/base_spec.h"

namespace imgtool::build {

namespace {

constexpr const char* kWhere = "$.base";
constexpr const char* kForms =
    "\"scratch\", \"docker://HOST/REPO@sha256:...\", \"oci:DIR@sha256:...\", \"oci-archive:FILE@sha256:...\" or "
    "{\"layout\": DIR, \"digest\": \"sha256:...\"}";

Error Bad(const std::string& where, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, where + ": " + why);
}

std::string Absolute(const std::string& dir, const std::string& p) {
  return !p.empty() && p[0] == '/' ? p : dir + "/" + p;
}

bool HasTransport(const std::string& text) {
  for (const char* prefix : {"docker://", "oci:", "oci-archive:"}) {
    if (text.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

Result<BaseSpec> Pinned(ref::Reference r, const std::string& dir) {
  BaseSpec base;
  base.scratch = false;
  auto d = oci::Digest::Parse(r.digest);
  if (!d.ok()) return d.error().Context(kWhere);
  if (ref::IsLocalPath(r)) r.path = Absolute(dir, r.path);
  base.reference = std::move(r);
  base.digest = *d;
  return base;
}

Result<BaseSpec> FromString(const std::string& text, const std::string& dir) {
  if (!HasTransport(text)) return Bad(kWhere, "'" + text + "': want " + kForms);
  auto r = ref::ParseReference(text);
  if (!r.ok()) return r.error().Context(kWhere);
  if (r->digest.empty()) {
    return Bad(kWhere, "'" + text + "' is not pinned: add @sha256:<digest> of the image or index (a tag can move)");
  }
  return Pinned(std::move(*r), dir);
}

// {"layout": DIR, "digest": "sha256:..."}: kept so specs written before the string form build unchanged.
Result<BaseSpec> FromObject(const oci::Json& j, const std::string& dir) {
  const std::string where = kWhere;
  for (const auto& [k, v] : j.items()) {
    if (k != "layout" && k != "digest") return Bad(where + "." + k, "unknown key (allowed: digest, layout)");
  }
  if (!j.contains("layout")) return Bad(where + ".layout", "required");
  if (!j["layout"].is_string()) return Bad(where + ".layout", "want a string");
  if (!j.contains("digest") || !j["digest"].is_string()) {
    return Bad(where + ".digest", "required: a base image is pinned by its manifest digest");
  }
  ref::Reference r = ref::LayoutReference(j["layout"].get<std::string>());
  r.digest = j["digest"].get<std::string>();
  if (r.path.empty()) return Bad(where + ".layout", "must not be empty");
  if (auto d = oci::Digest::Parse(r.digest); !d.ok()) return d.error().Context(where + ".digest");
  r.tag = r.digest;  // as ParseReference writes oci:DIR@sha256:...
  return Pinned(std::move(r), dir);
}

}  // namespace

Result<BaseSpec> ParseBaseSpec(const oci::Json& j, const std::string& dir) {
  if (j.is_string()) {
    const std::string text = j.get<std::string>();
    if (text == "scratch") return BaseSpec{};
    return FromString(text, dir);
  }
  if (j.is_object()) return FromObject(j, dir);
  return Bad(kWhere, std::string("want ") + kForms);
}

std::string BaseName(const BaseSpec& base) {
  if (!base.registry()) return "";
  const ref::Reference& r = base.reference;
  return r.host + "/" + r.repository + (r.tag.empty() ? "" : ":" + r.tag);
}

std::string BaseSource(const BaseSpec& base) { return base.registry() ? "docker://" + BaseName(base) : ""; }

}  // namespace imgtool::build
