#include "admission/decide.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iterator>
#include <map>
#include <vector>

#include "admission/review.h"
#include "oci/base64.h"
#include "oci/canonical_json.h"

namespace imgtool::admission {

namespace {

constexpr int kForbidden = 403;

oci::Json Envelope(const std::string& uid, bool allowed, int code, const std::string& message) {
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"response", {{"uid", uid}, {"allowed", allowed}, {"status", {{"code", code}, {"message", message}}}}}};
}

// The request itself is broken: 400 without a readable uid (nothing to answer), else an
// answer the API server reads as a denial.
Answer Refuse(const oci::Json& review, const std::string& message) {
  Answer a;
  a.uid = ReadableUid(review);
  a.reason = Reason::kMalformed;
  a.http_status = a.uid.empty() ? 400 : 200;
  a.body = Envelope(a.uid, false, 400, message).dump();
  return a;
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

// The more telling of two reasons (the enum's order is the precedence, most telling last).
Reason Worse(Reason a, Reason b) {
  static const Reason order[] = {Reason::kNone,     Reason::kPolicy,   Reason::kRegistry,      Reason::kCapacity,
                                 Reason::kDeadline, Reason::kInternal, Reason::kTooManyImages, Reason::kMalformed};
  auto rank = [](Reason r) {
    for (size_t i = 0; i < std::size(order); ++i) {
      if (order[i] == r) return i;
    }
    return size_t{0};
  };
  return rank(a) >= rank(b) ? a : b;
}

// A failed rule's class. An image the checker could not open fails every rule with the
// evaluator's "cannot open the image: <cause>" (policy/evaluate.cc), the checker's
// capacity cause naming "registry checks at capacity" (checker.cc).
Reason RuleReason(const std::string& why) {
  if (why.find("cannot open the image: ") == std::string::npos) return Reason::kPolicy;
  return why.find("registry checks at capacity") != std::string::npos ? Reason::kCapacity : Reason::kRegistry;
}

Reason AddViolations(const PodImage& img, const Outcome& got, std::chrono::milliseconds deadline,
                     std::vector<std::string>& violations) {
  std::string who = img.where + " image " + img.image + ": ";
  if (!got) {
    violations.push_back(who + "no answer from the registry within " + Seconds(deadline));
    return Reason::kDeadline;
  }
  if (!got->ok()) {
    violations.push_back(who + "check failed: " + got->error().message);
    return Reason::kRegistry;
  }
  Reason r = Reason::kNone;
  for (const auto& rule : (*got)->rules) {
    if (rule.pass) continue;
    violations.push_back(who + rule.rule + ": " + rule.reason);
    r = Worse(r, RuleReason(rule.reason));
  }
  if (!(*got)->pass && (*got)->rules.empty()) {
    violations.push_back(who + "no rule passed");
    r = Worse(r, Reason::kPolicy);
  }
  return r;
}

Answer Judged(const ReviewRequest& req, Answer a, bool allowed, int code, const std::string& message) {
  a.uid = req.uid;
  a.kind = req.kind;
  a.name = req.name;
  a.allowed = allowed;
  a.http_status = 200;
  a.body = Envelope(req.uid, allowed, code, message).dump();
  return a;
}

Answer Judge(const ReviewRequest& req, const CheckStarter& start, Mode mode, const ReviewLimits& limits,
             TimePoint deadline) {
  Answer a;
  // Deleting runs nothing; the API server sends no object.
  if (req.operation == "DELETE") return Judged(req, a, true, 200, "DELETE: no images to check");
  auto images = ExtractImages(req.kind, req.object);
  if (!images.ok()) {
    a.reason = Reason::kMalformed;
    return Judged(req, a, false, 400, images.error().message);
  }
  for (const auto& img : *images) {
    if (std::find(a.images.begin(), a.images.end(), img.image) == a.images.end()) a.images.push_back(img.image);
  }
  std::string what = req.kind + " " + req.name;
  if (images->size() > limits.max_images) {
    a.reason = Reason::kTooManyImages;
    a.images.clear();  // unchecked, and possibly a great many: the log names none
    return Judged(req, a, false, kForbidden,
                  what + ": denied: " + std::to_string(images->size()) + " images, more than the " +
                      std::to_string(limits.max_images) + " one review may name");
  }
  auto outcomes = CheckAll(*images, start, mode == Mode::kMutate, deadline);
  oci::Json patch = oci::Json::array();
  for (const auto& img : *images) {
    const Outcome& got = outcomes.at(img.image);
    a.reason = Worse(a.reason, AddViolations(img, got, limits.deadline, a.violations));
    if (mode == Mode::kMutate && got && got->ok() && !(*got)->digest.empty()) {
      std::string pinned = PinImage(img.image, (*got)->digest);
      if (pinned != img.image) patch.push_back({{"op", "replace"}, {"path", img.pointer}, {"value", pinned}});
    }
  }
  if (!a.violations.empty()) {
    std::string msg = what + ": denied by policy: " + std::to_string(a.violations.size()) + " violation(s): ";
    for (size_t i = 0; i < a.violations.size(); ++i) msg += (i ? "; " : "") + a.violations[i];
    return Judged(req, a, false, kForbidden, msg);
  }
  a = Judged(req, a, true, 200, what + ": " + std::to_string(images->size()) + " image(s) allowed");
  if (!patch.empty()) {
    auto out = Envelope(req.uid, true, 200, what + ": " + std::to_string(images->size()) + " image(s) allowed");
    out["response"]["patchType"] = "JSONPatch";
    out["response"]["patch"] = oci::Base64Encode(patch.dump());
    a.body = out.dump();
  }
  return a;
}

}  // namespace

std::string ReasonName(Reason r) {
  switch (r) {
    case Reason::kNone:
      return "none";
    case Reason::kPolicy:
      return "policy";
    case Reason::kRegistry:
      return "registry";
    case Reason::kCapacity:
      return "capacity";
    case Reason::kDeadline:
      return "deadline";
    case Reason::kTooManyImages:
      return "too_many_images";
    case Reason::kMalformed:
      return "malformed";
    case Reason::kInternal:
      return "internal";
  }
  return "internal";
}

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
  Answer failed;
  failed.reason = Reason::kInternal;
  try {
    return Judge(*req, start, mode, limits, deadline);
  } catch (const std::exception& e) {
    return Judged(*req, failed, false, 500, std::string("internal error: ") + e.what());
  } catch (...) {
    return Judged(*req, failed, false, 500, "internal error");
  }
}

}  // namespace imgtool::admission
