#include "admission/review.h"

#include "ref/docker_name.h"
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
      out.push_back({image, at + "/image",
                     std::string(list) + "[" + std::to_string(i) + "]" + (name.empty() ? "" : " (" + name + ")")});
    }
  }
  if (out.empty()) return Bad("$.request.object" + spec_path + "/containers", "no containers");
  return out;
}

Result<std::string> DockerReference(const std::string& image) {
  if (image.find("://") != std::string::npos) {
    return MakeError(ErrorKind::kInvalidInput, "image '" + image + "': a pod image has no transport prefix");
  }
  // The same grammar and Docker Hub defaults as every docker:// reference (ref/docker_name.h).
  auto name = ref::ParseDockerName(image);
  if (!name.ok()) return name.error().Context("image '" + image + "'");
  // What the runtime pulls (docker's ParseDockerRef): the digest when there is one, the
  // tag beside it dropped; else the tag, "latest" when none is written.
  if (!name->digest.empty()) {
    name->tag.clear();
  } else if (name->tag.empty()) {
    name->tag = "latest";
  }
  return ref::FromDockerName(std::move(*name)).str();
}

}  // namespace imgtool::admission
