#include "admission/decide.h"

#include <cstdio>
#include <exception>
#include <map>
#include <vector>

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

using TimePoint = std::chrono::steady_clock::time_point;
using Outcome = std::optional<Result<policy::ImageDecision>>;  // nullopt: no answer in time

// Every distinct image started before any is waited for, so their checks overlap; then
// each is collected against the one deadline.
std::map<std::string, Outcome> CheckAll(const std::vector<PodImage>& images, const CheckStarter& start, bool pin,
                                        TimePoint deadline) {
  std::map<std::string, PendingCheck> pending;
  for (const auto& img : images) {
    if (!pending.count(img.image)) pending.emplace(img.image, start(img.image, pin));
  }
  std::map<std::string, Outcome> out;
  for (auto& [image, wait] : pending) out.emplace(image, wait(deadline));
  return out;
}

void AddViolations(const PodImage& img, const Outcome& got, std::chrono::milliseconds deadline,
                   std::vector<std::string>& violations) {
  std::string who = img.where + " image " + img.image + ": ";
  if (!got) {
    violations.push_back(who + "no answer from the registry within " + Seconds(deadline));
  } else if (!got->ok()) {
    violations.push_back(who + "check failed: " + got->error().message);
  } else {
    for (const auto& r : (*got)->rules) {
      if (!r.pass) violations.push_back(who + r.rule + ": " + r.reason);
    }
    if (!(*got)->pass && (*got)->rules.empty()) violations.push_back(who + "no rule passed");
  }
}

Answer Judge(const ReviewRequest& req, const CheckStarter& start, Mode mode, const ReviewLimits& limits,
             TimePoint deadline) {
  // Deleting runs nothing; the API server sends no object.
  if (req.operation == "DELETE") return {200, Envelope(req.uid, true, 200, "DELETE: no images to check").dump()};
  auto images = ExtractImages(req.kind, req.object);
  if (!images.ok()) return {200, Envelope(req.uid, false, 400, images.error().message).dump()};
  std::string what = req.kind + " " + req.name;
  if (images->size() > limits.max_images) {
    return {200, Envelope(req.uid, false, kForbidden,
                          what + ": denied: " + std::to_string(images->size()) + " images, more than the " +
                              std::to_string(limits.max_images) + " one review may name")
                     .dump()};
  }
  auto outcomes = CheckAll(*images, start, mode == Mode::kMutate, deadline);
  std::vector<std::string> violations;
  oci::Json patch = oci::Json::array();
  for (const auto& img : *images) {
    const Outcome& got = outcomes.at(img.image);
    AddViolations(img, got, limits.deadline, violations);
    if (mode == Mode::kMutate && got && got->ok() && !(*got)->digest.empty()) {
      std::string pinned = PinImage(img.image, (*got)->digest);
      if (pinned != img.image) patch.push_back({{"op", "replace"}, {"path", img.pointer}, {"value", pinned}});
    }
  }
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

CheckStarter AnswerAtOnce(ImageChecker check) {
  return [check = std::move(check)](const std::string& image, bool pin) -> PendingCheck {
    Outcome got = check(image, pin);
    return [got](TimePoint) { return got; };
  };
}

std::string Seconds(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + " s";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", static_cast<double>(d.count()) / 1000);
  return buf;
}

Answer Decide(const std::string& body, const CheckStarter& start, Mode mode, const ReviewLimits& limits) {
  // The deadline counts from here: the body is already read, the API server's clock runs.
  auto deadline = std::chrono::steady_clock::now() + limits.deadline;
  auto parsed = oci::ParseJsonLenient(body, "AdmissionReview");
  if (!parsed.ok()) return Refuse(oci::Json(), parsed.error().message);
  const oci::Json& review = *parsed;
  if (review.is_discarded()) return Refuse(oci::Json(), "AdmissionReview: the body is not JSON");
  auto req = ParseReview(review);
  if (!req.ok()) return Refuse(review, req.error().message);
  // The checker reaches registries and key files; whatever escapes it must still deny.
  try {
    return Judge(*req, start, mode, limits, deadline);
  } catch (const std::exception& e) {
    return {200, Envelope(req->uid, false, 500, std::string("internal error: ") + e.what()).dump()};
  } catch (...) {
    return {200, Envelope(req->uid, false, 500, "internal error").dump()};
  }
}

}  // namespace imgtool::admission
