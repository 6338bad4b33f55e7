// AdmissionReview (imgtool/admission/review.h): what the Kubernetes API server posts to
// the webhook. The envelope, the images of the object (every pod-spec kind: Pod,
// Deployment, Job, CronJob, ...), and each image text as a registry reference, as the
// webhook reads them before deciding. Inputs may be nesting recipes (fuzz_util.h,
// ExpandNesting).
#include <cstddef>
#include <cstdint>
#include <string>

#include "admission/review.h"
#include "fuzz_util.h"
#include "oci/canonical_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool;
  const std::string doc = fuzz::NestedInput(data, size);
  std::string_view raw = doc;
  auto j = oci::ParseJson(raw, "review");
  if (j.ok()) {
    (void)admission::ReadableUid(*j);
    auto review = admission::ParseReview(*j);
    if (review.ok()) {
      auto images = admission::ExtractImages(review->kind, review->object);
      if (images.ok()) {
        for (const auto& image : *images) (void)admission::DockerReference(image.image);
      }
    }
    // The input as the object itself, under every kind: reaches the pod-spec walk
    // without the envelope around it.
    for (const auto& [kind, path] : admission::PodSpecKinds()) (void)admission::ExtractImages(kind, *j);
  }
  (void)admission::DockerReference(std::string(raw));
  return 0;
}
