// The Kubernetes side of admission, as data: an AdmissionReview v1 request -> the images
// its object would run, each with the JSON pointer of its "image" field (JSONPatch paths
// for the mutating mode), and the pod-spec image text -> a docker:// reference. Pure: no
// I/O, so every shape the API server sends is a unit test.
//
// Not here: deciding (decide.h) or asking registries (checker.h).
#pragma once

#include <string>
#include <vector>

#include "oci/canonical_json.h"
#include "oci/result.h"

namespace imgtool::admission {

// clang-tidy 14 reports the implicit special members as throwing: it reads nlohmann::json's
// destructor so; they only move and destroy strings and json, none of which throws there.
struct ReviewRequest {  // NOLINT(bugprone-exception-escape)
  std::string uid;
  std::string kind;       // request.kind.kind: "Pod", "Deployment", ...
  std::string operation;  // CREATE, UPDATE, DELETE, CONNECT
  std::string name;       // namespace/name for messages (name may be empty on CREATE)
  oci::Json object;       // request.object (null on DELETE)
};

// Parses the envelope: apiVersion admission.k8s.io/v1, kind AdmissionReview, a request
// with a uid. kInvalidInput naming the JSON path otherwise.
Result<ReviewRequest> ParseReview(const oci::Json& review);
// The uid when one can be read, even from an envelope ParseReview refuses (so the
// refusal can still be an AdmissionReview answer).
std::string ReadableUid(const oci::Json& review);

struct PodImage {
  std::string image;    // as written in the spec: "127.0.0.1:5000/team/img:v1"
  std::string pointer;  // JSON pointer in request.object: "/spec/template/spec/containers/0/image"
  std::string where;    // for messages: "initContainers[0] (setup)"
};

// Kinds with a pod spec, and where it sits in the object.
const std::vector<std::pair<std::string, std::string>>& PodSpecKinds();

// Every container, initContainer and ephemeralContainer image of the object's pod spec.
// kInvalidInput for a kind without a pod spec, or a spec that is not the documented shape
// (a container without an image is refused: the API server would default nothing).
Result<std::vector<PodImage>> ExtractImages(const std::string& kind, const oci::Json& object);

// The pod-spec image as a registry reference, normalized as the container runtime does
// (ref::ParseDockerName's grammar and Docker Hub short names):
// "nginx" -> "docker://docker.io/library/nginx:latest", "reg:5000/a/b" ->
// "docker://reg:5000/a/b:latest"; a digest stays, a tag beside it is dropped (registries
// ignore it).
Result<std::string> DockerReference(const std::string& image);

}  // namespace imgtool::admission
