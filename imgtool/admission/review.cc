#include "admission/review.h"

#include "ref/reference.h"

namespace imgtool::admission {

namespace {

Error Bad(const std::string& path, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, "AdmissionReview: " + path + ": " + why);
}

std::string StringAt(const oci::Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return "";
  return j[key].get<std::string>();
}

// "docker.io" and its defaults: a first component without '.' or ':' (and not
// localhost) is a Docker Hub namespace, not a host.
bool LooksLikeHost(const std::string& first) {
  return first.find_first_of(".:") != std::string::npos || first == "localhost";
}

}  // namespace

std::string ReadableUid(const oci::Json& review) {
  if (!review.is_object() || !review.contains("request")) return "";
  return StringAt(review["request"], "uid");
}

Result<ReviewRequest> ParseReview(const oci::Json& review) {
  if (!review.is_object()) return Bad("$", "not a JSON object");
  if (StringAt(review, "apiVersion") != "admission.k8s.io/v1") {
    return Bad("$.apiVersion", "want admission.k8s.io/v1, got '" + StringAt(review, "apiVersion") + "'");
  }
  if (StringAt(review, "kind") != "AdmissionReview") {
    return Bad("$.kind", "want AdmissionReview, got '" + StringAt(review, "kind") + "'");
  }
  if (!review.contains("request") || !review["request"].is_object()) return Bad("$.request", "missing");
  const auto& r = review["request"];
  ReviewRequest out;
  out.uid = StringAt(r, "uid");
  if (out.uid.empty()) return Bad("$.request.uid", "missing or not a string");
  if (!r.contains("kind") || StringAt(r["kind"], "kind").empty()) return Bad("$.request.kind.kind", "missing");
  out.kind = StringAt(r["kind"], "kind");
  out.operation = StringAt(r, "operation");
  out.name = StringAt(r, "namespace") + "/" + StringAt(r, "name");
  if (r.contains("object")) out.object = r["object"];
  return out;
}

const std::vector<std::pair<std::string, std::string>>& PodSpecKinds() {
  static const std::vector<std::pair<std::string, std::string>> kinds = {
      {"Pod", "/spec"},
      {"Deployment", "/spec/template/spec"},
      {"ReplicaSet", "/spec/template/spec"},
      {"StatefulSet", "/spec/template/spec"},
      {"DaemonSet", "/spec/template/spec"},
      {"Job", "/spec/template/spec"},
      {"ReplicationController", "/spec/template/spec"},
      {"CronJob", "/spec/jobTemplate/spec/template/spec"},
  };
  return kinds;
}

Result<std::vector<PodImage>> ExtractImages(const std::string& kind, const oci::Json& object) {
  std::string spec_path;
  for (const auto& [k, p] : PodSpecKinds()) {
    if (k == kind) spec_path = p;
  }
  if (spec_path.empty()) return Bad("$.request.kind.kind", "'" + kind + "' has no pod spec this webhook checks");
  const oci::Json::json_pointer ptr(spec_path);
  if (!object.is_object() || !object.contains(ptr) || !object[ptr].is_object()) {
    return Bad("$.request.object" + spec_path, "missing pod spec");
  }
  const auto& spec = object[ptr];
  std::vector<PodImage> out;
  for (const char* list : {"initContainers", "containers", "ephemeralContainers"}) {
    if (!spec.contains(list)) continue;
    const std::string path = spec_path + "/" + list;
    if (!spec[list].is_array()) return Bad("$.request.object" + path, "not an array");
    for (size_t i = 0; i < spec[list].size(); ++i) {
      const auto& c = spec[list][i];
      const std::string at = path + "/" + std::to_string(i);
      std::string image = StringAt(c, "image");
      if (image.empty()) return Bad("$.request.object" + at + "/image", "missing or not a string");
      std::string name = StringAt(c, "name");
      out.push_back({image, at + "/image", std::string(list) + "[" + std::to_string(i) + "]" +
                                               (name.empty() ? "" : " (" + name + ")")});
    }
  }
  if (out.empty()) return Bad("$.request.object" + spec_path + "/containers", "no containers");
  return out;
}

Result<std::string> DockerReference(const std::string& image) {
  if (image.find("://") != std::string::npos) {
    return MakeError(ErrorKind::kInvalidInput, "image '" + image + "': a pod image has no transport prefix");
  }
  std::string name = image, digest;
  auto at = name.find('@');
  if (at != std::string::npos) {
    digest = name.substr(at);
    name = name.substr(0, at);
  }
  auto slash = name.find('/');
  if (slash == std::string::npos) {
    name = "docker.io/library/" + name;
  } else if (!LooksLikeHost(name.substr(0, slash))) {
    name = "docker.io/" + name;
  }
  // A tag is a ':' after the last '/' (a ':' before it is the host's port).
  auto colon = name.rfind(':');
  bool tagged = colon != std::string::npos && colon > name.rfind('/');
  if (!digest.empty() && tagged) name = name.substr(0, colon);
  if (digest.empty() && !tagged) name += ":latest";
  std::string text = "docker://" + name + digest;
  auto ref = ref::ParseReference(text);
  if (!ref.ok()) return ref.error().Context("image '" + image + "'");
  return text;
}

}  // namespace imgtool::admission
