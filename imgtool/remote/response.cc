#include "remote/response.h"

#include <cstdlib>

#include "oci/canonical_json.h"

namespace imgtool::remote {

std::string NextPageUrl(const std::string& link, const std::string& base_url) {
  auto lt = link.find('<'), gt = link.find('>');
  if (lt == std::string::npos || gt == std::string::npos || link.find("rel=\"next\"") == std::string::npos) {
    return "";
  }
  std::string next = link.substr(lt + 1, gt - lt - 1);
  return next.rfind("http", 0) == 0 ? next : base_url + next;
}

std::vector<std::string> TagsFromBody(const std::string& body) {
  std::vector<std::string> tags;
  oci::Json j = oci::ParseJsonOrDiscarded(body);
  if (j.is_object() && j.contains("tags") && j["tags"].is_array()) {
    for (const auto& t : j["tags"]) {
      if (t.is_string()) tags.push_back(t.get<std::string>());
    }
  }
  return tags;
}

std::string AbsoluteLocation(const std::string& base_url, const std::string& location) {
  if (location.rfind("http://", 0) == 0 || location.rfind("https://", 0) == 0) return location;
  return base_url + location;
}

uint64_t ResumeOffset(const std::string& range) {
  if (range.empty() || range == "0-0") return 0;
  auto dash = range.find('-');
  return dash == std::string::npos ? 0 : std::strtoull(range.c_str() + dash + 1, nullptr, 10) + 1;
}

int64_t ContentLength(const std::string& value) {
  // Digits only, and few enough to fit: std::stoll threw on anything else, ending the
  // process on a registry's (or a proxy's) malformed header.
  if (value.empty() || value.size() > 18 || value.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::strtoll(value.c_str(), nullptr, 10);
}

std::string TokenFromReply(const std::string& body) {
  // Strings only ({"token": 1} is no token): the reply is the token server's.
  oci::Json j = oci::ParseJsonOrDiscarded(body);
  std::string token = oci::StringMember(j, "token");
  return token.empty() ? oci::StringMember(j, "access_token") : token;
}

std::string ManifestMediaType(const std::string& bytes, const std::string& content_type) {
  oci::Json j = oci::ParseJsonOrDiscarded(bytes);
  if (j.is_object() && j.contains("mediaType") && j["mediaType"].is_string()) return j["mediaType"].get<std::string>();
  // Without mediaType: an index has "manifests", an image "config" (image-spec allows both).
  if (j.is_object() && j.contains("manifests")) return "application/vnd.oci.image.index.v1+json";
  if (!content_type.empty() && content_type.find("json") != std::string::npos) {
    return content_type.substr(0, content_type.find(';'));
  }
  return "application/vnd.oci.image.manifest.v1+json";
}

}  // namespace imgtool::remote
