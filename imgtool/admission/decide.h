// The decision: AdmissionReview bytes in -> the HTTP status and AdmissionReview answer out.
// Pure given the ImageChecker it is handed (the server passes the registry-backed one,
// checker.h; tests pass a map), so every answer the webhook can give is a unit test.
//
// Fails closed: a body that is not JSON, an envelope without a uid, a kind without a pod
// spec, an image whose check errors, an exception from the checker, all deny. With a
// readable uid the answer is HTTP 200 with allowed=false (the API server reads it);
// without one, 400 (it cannot be matched to a request, so the failurePolicy applies).
#pragma once

#include <functional>
#include <string>

#include "oci/result.h"
#include "policy/evaluate.h"

namespace imgtool::admission {

// Checks one pod-spec image against the policy. `pin`: evaluate the reference rewritten
// to the digest it resolves to (the mutating mode, where the pod will run the digest);
// otherwise the reference as written (so digestPinned sees a tag). The decision's digest
// is the resolved one (empty when resolution failed). An error: the check could not run.
using ImageChecker = std::function<Result<policy::ImageDecision>(const std::string& image, bool pin)>;

enum class Mode { kValidate, kMutate };

struct Answer {
  int http_status = 200;
  std::string body;  // JSON
};

Answer Decide(const std::string& body, const ImageChecker& check, Mode mode);

// "image@sha256:..." for a pod-spec image and the digest it resolved to; the tag is dropped.
std::string PinImage(const std::string& image, const std::string& digest);

}  // namespace imgtool::admission
