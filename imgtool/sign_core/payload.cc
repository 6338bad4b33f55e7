#include "sign_core/payload.h"

#include "oci/canonical_json.h"

namespace imgtool::sign {

namespace {

// A Go encoding/json string literal for text already checked to hold no control
// characters: Go also escapes <, >, & and U+2028/U+2029 (its HTML-safe default).
std::string GoJsonString(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (s.substr(i, 3) == "\xe2\x80\xa8" || s.substr(i, 3) == "\xe2\x80\xa9") {
      out += s[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

Status CheckText(const std::string& s, const std::string& what) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return MakeError(ErrorKind::kInvalidInput, what + ": control characters not allowed");
  }
  // CanonicalJson refuses invalid UTF-8; reuse it rather than a second validator.
  if (auto j = oci::CanonicalJson(oci::Json(s)); !j.ok()) {
    return MakeError(ErrorKind::kInvalidInput, what + ": not valid UTF-8");
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> SimpleSigningPayload(const std::string& docker_reference, const oci::Digest& image,
                                         const std::map<std::string, std::string>& annotations) {
  IMGTOOL_TRY(CheckText(docker_reference, "identity"));
  std::string optional = "null";
  if (!annotations.empty()) {
    optional = "{";
    for (const auto& [k, v] : annotations) {  // std::map: sorted as Go sorts map keys
      IMGTOOL_TRY(CheckText(k, "annotation " + k));
      IMGTOOL_TRY(CheckText(v, "annotation " + k));
      if (optional.size() > 1) optional += ",";
      optional += GoJsonString(k) + ":" + GoJsonString(v);
    }
    optional += "}";
  }
  return R"({"critical":{"identity":{"docker-reference":)" + GoJsonString(docker_reference) +
         R"(},"image":{"docker-manifest-digest":")" + image.str() + R"("},"type":")" + std::string(kSimpleSigningType) +
         R"("},"optional":)" + optional + "}";
}

Result<Claims> ParseSimpleSigningPayload(std::string_view bytes, const std::string& what) {
  auto j = oci::ParseJson(bytes, what);
  if (!j.ok()) return j.error();
  auto bad = [&](const std::string& why) { return MakeError(ErrorKind::kInvalidInput, what + ": " + why); };
  if (!j->is_object() || !j->contains("critical") || !(*j)["critical"].is_object()) {
    return bad("no critical section");
  }
  const oci::Json& c = (*j)["critical"];
  auto str = [](const oci::Json& o, const char* a, const char* b) -> std::string {
    if (!o.contains(a) || !o[a].is_object() || !o[a].contains(b) || !o[a][b].is_string()) return "";
    return o[a][b].get<std::string>();
  };
  Claims claims;
  claims.type = c.contains("type") && c["type"].is_string() ? c["type"].get<std::string>() : "";
  claims.docker_reference = str(c, "identity", "docker-reference");
  claims.manifest_digest = str(c, "image", "docker-manifest-digest");
  if (j->contains("optional") && (*j)["optional"].is_object()) {
    for (const auto& [k, v] : (*j)["optional"].items()) {
      if (v.is_string()) claims.annotations[k] = v.get<std::string>();
    }
  }
  return claims;
}

}  // namespace imgtool::sign
