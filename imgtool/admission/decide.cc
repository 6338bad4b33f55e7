#include "admission/decide.h"

#include <exception>

#include "admission/review.h"
#include "oci/canonical_json.h"
#include "sign/base64.h"

namespace imgtool::admission {

namespace {

constexpr int kForbidden = 403;

oci::Json Envelope(const std::string& uid, bool allowed, int code, const std::string& message) {
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"response", {{"uid", uid}, {"allowed", allowed}, {"status", {{"code", code}, {"message", message}}}}}};
}

Answer Refuse(const oci::Json& review, const std::string& message) {
  std::string uid = ReadableUid(review);
  if (uid.empty()) return {400, Envelope("", false, 400, message).dump()};
  return {200, Envelope(uid, false, 400, message).dump()};
}

Answer Judge(const ReviewRequest& req, const ImageChecker& check, Mode mode) {
  // Deleting runs nothing; the API server sends no object.
  if (req.operation == "DELETE") return {200, Envelope(req.uid, true, 200, "DELETE: no images to check").dump()};
  auto images = ExtractImages(req.kind, req.object);
  if (!images.ok()) return {200, Envelope(req.uid, false, 400, images.error().message).dump()};
  std::vector<std::string> violations;
  oci::Json patch = oci::Json::array();
  for (const auto& img : *images) {
    auto d = check(img.image, mode == Mode::kMutate);
    if (!d.ok()) {
      violations.push_back(img.where + " image " + img.image + ": check failed: " + d.error().message);
      continue;
    }
    for (const auto& r : d->rules) {
      if (!r.pass) violations.push_back(img.where + " image " + img.image + ": " + r.rule + ": " + r.reason);
    }
    if (!d->pass && d->rules.empty()) violations.push_back(img.where + " image " + img.image + ": no rule passed");
    if (mode == Mode::kMutate && !d->digest.empty()) {
      std::string pinned = PinImage(img.image, d->digest);
      if (pinned != img.image) patch.push_back({{"op", "replace"}, {"path", img.pointer}, {"value", pinned}});
    }
  }
  std::string what = req.kind + " " + req.name;
  if (!violations.empty()) {
    std::string msg = what + ": denied by policy: " + std::to_string(violations.size()) + " violation(s): ";
    for (size_t i = 0; i < violations.size(); ++i) msg += (i ? "; " : "") + violations[i];
    return {200, Envelope(req.uid, false, kForbidden, msg).dump()};
  }
  auto out = Envelope(req.uid, true, 200, what + ": " + std::to_string(images->size()) + " image(s) allowed");
  if (!patch.empty()) {
    out["response"]["patchType"] = "JSONPatch";
    out["response"]["patch"] = sign::Base64Encode(patch.dump());
  }
  return {200, out.dump()};
}

}  // namespace

std::string PinImage(const std::string& image, const std::string& digest) {
  std::string name = image.substr(0, image.find('@'));
  auto colon = name.rfind(':');
  auto slash = name.rfind('/');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) name = name.substr(0, colon);
  return name + "@" + digest;
}

Answer Decide(const std::string& body, const ImageChecker& check, Mode mode) {
  auto review = oci::Json::parse(body, nullptr, false);
  if (review.is_discarded()) return Refuse(oci::Json(), "AdmissionReview: the body is not JSON");
  auto req = ParseReview(review);
  if (!req.ok()) return Refuse(review, req.error().message);
  // The checker reaches registries and key files; whatever escapes it must still deny.
  try {
    return Judge(*req, check, mode);
  } catch (const std::exception& e) {
    return {200, Envelope(req->uid, false, 500, std::string("internal error: ") + e.what()).dump()};
  } catch (...) {
    return {200, Envelope(req->uid, false, 500, "internal error").dump()};
  }
}

}  // namespace imgtool::admission
