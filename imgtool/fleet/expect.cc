// --expect: the fields a golden build promises, read from what `imgtool build` wrote
// (stack.json in the image, the build record, the --json output). Formats: builder/stack.cc
// and builder/build_record.cc; this file reads them without linking the builder.
#include <utility>

#include "fleet/compare.h"
#include "oci/digest.h"
#include "oci/media_types.h"

namespace imgtool::fleet {

namespace {

using Fields = std::map<std::string, std::string>;

Error Bad(const std::string& path, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, path + ": " + why);  // the caller names the file
}

// The fingerprint field each stack.json component promises.
const std::map<std::string, std::string>& ComponentFields() {
  static const std::map<std::string, std::string> kFields = {{"cuda", "cuda.runtime"},
                                                             {"cublas", "cublas"},
                                                             {"cudnn", "cudnn"},
                                                             {"nccl", "nccl"},
                                                             {"driver", "driver.version"}};
  return kFields;
}

// "1:2.28.9-1+cuda13.0" -> "2.28.9" (the deb's epoch and revision); wheels have neither.
std::string Upstream(std::string v) {
  if (auto colon = v.find(':'); colon != std::string::npos) v = v.substr(colon + 1);
  if (auto dash = v.rfind('-'); dash != std::string::npos) v = v.substr(0, dash);
  return v;
}

Result<std::string> StringAt(const oci::Json& obj, const std::string& key, const std::string& path) {
  if (!obj.contains(key)) return Bad(path + "." + key, "missing");
  if (!obj[key].is_string() || obj[key].get_ref<const std::string&>().empty()) {
    return Bad(path + "." + key, "not a non-empty string");
  }
  return obj[key].get<std::string>();
}

Result<std::string> DigestAt(const oci::Json& obj, const std::string& key, const std::string& path) {
  auto s = StringAt(obj, key, path);
  if (!s.ok()) return s.error();
  auto d = oci::Digest::Parse(*s);
  if (!d.ok()) return Bad(path + "." + key, d.error().message);
  return d->str();
}

// stack.json's {"schemaVersion": 1, "components": {...}} at `path`.
Status FromStack(const oci::Json& j, const std::string& path, Fields& out) {
  if (!j.is_object()) return Bad(path, "not an object");
  if (!j.contains("schemaVersion") || !j["schemaVersion"].is_number_integer() || j["schemaVersion"] != 1) {
    return Bad(path + ".schemaVersion", "want 1");
  }
  if (!j.contains("components") || !j["components"].is_object()) return Bad(path + ".components", "not an object");
  for (const auto& [name, c] : j["components"].items()) {
    std::string at = path + ".components." + name;
    auto field = ComponentFields().find(name);
    if (field == ComponentFields().end()) {
      return Bad(at, "unknown component (this imgtool knows cuda, cublas, cudnn, nccl, driver)");
    }
    if (!c.is_object()) return Bad(at, "not an object");
    auto version = StringAt(c, "version", at);
    if (!version.ok()) return version.error();
    // What the image holds (the package), finer than the pin; the probe's versions match
    // either as dotted prefixes.
    std::string value = *version;
    if (c.contains("packageVersion")) {
      auto pv = StringAt(c, "packageVersion", at);
      if (!pv.ok()) return pv.error();
      value = Upstream(*pv);
    }
    out[field->second] = value;
    if (!c.contains("libraries")) continue;
    if (!c["libraries"].is_array()) return Bad(at + ".libraries", "not an array");
    for (size_t i = 0; i < c["libraries"].size(); ++i) {
      const oci::Json& lib = c["libraries"][i];
      std::string lat = at + ".libraries[" + std::to_string(i) + "]";
      if (!lib.is_object()) return Bad(lat, "not an object");
      auto file = StringAt(lib, "path", lat);
      if (!file.ok()) return file.error();
      auto sha = DigestAt(lib, "sha256", lat);
      if (!sha.ok()) return sha.error();
      std::string base = file->substr(file->rfind('/') + 1);
      if (base.empty()) return Bad(lat + ".path", "'" + *file + "' names no file");
      auto [it, added] = out.emplace("lib." + base, *sha);
      if (!added && it->second != *sha) {
        return Bad(lat, "lib." + base + " is listed twice with different hashes (" + it->second + ", " + *sha + ")");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::map<std::string, std::string>> ExpectedFields(const std::string& json_text) {
  auto parsed = oci::ParseJson(json_text, "stack.json or build record");
  if (!parsed.ok()) return parsed.error();
  const oci::Json& j = *parsed;
  if (!j.is_object()) return Bad("$", "not an object");
  Fields out;
  if (j.contains("components")) {
    IMGTOOL_TRY(FromStack(j, "$", out));
    // The file as the build wrote it: every worker's probe hashes the same bytes.
    auto canonical = oci::CanonicalJson(j);
    if (canonical.ok() && *canonical + "\n" == json_text) out["image.stack_json"] = oci::Digest::Of(json_text).str();
    return out;
  }
  // A multi-platform build's index is what every worker's image comes from, whatever its
  // platform: it is expected as image.index (each worker's image digest is its platform's).
  if (j.contains("recordVersion") && j.contains("outputs") && j["outputs"].is_object() &&
      j["outputs"].contains("index")) {  // OUTPUT.build.json of an index
    auto d = DigestAt(j["outputs"]["index"], "digest", "$.outputs.index");
    if (!d.ok()) return d.error();
    out["image.index"] = *d;
  } else if (j.contains("recordVersion")) {  // OUTPUT.build.json
    if (!j.contains("outputs") || !j["outputs"].is_object() || !j["outputs"].contains("manifest") ||
        !j["outputs"]["manifest"].is_object()) {
      return Bad("$.outputs.manifest", "missing");
    }
    auto d = DigestAt(j["outputs"]["manifest"], "digest", "$.outputs.manifest");
    if (!d.ok()) return d.error();
    out["image.digest"] = *d;
  } else if (j.contains("reference") && j.contains("digest")) {  // imgtool build --json
    auto d = DigestAt(j, "digest", "$");
    if (!d.ok()) return d.error();
    bool index = j.contains("mediaType") && j["mediaType"] == oci::kMediaTypeIndex;
    out[index ? "image.index" : "image.digest"] = *d;
  } else {
    return Bad("$",
               "neither stack.json (components), a build record (outputs.manifest) nor `imgtool build --json` "
               "output (reference, digest)");
  }
  if (j.contains("stack")) IMGTOOL_TRY(FromStack(j["stack"], "$.stack", out));
  return out;
}

}  // namespace imgtool::fleet
