// The decision: AdmissionReview bytes in -> the HTTP status and AdmissionReview answer out.
// Pure given the checks it is handed (the server passes the registry-backed ones,
// checker.h; tests pass a map), so every answer the webhook can give is a unit test.
//
// Fails closed: a body that is not JSON, an envelope without a uid, a kind without a pod
// spec, an image whose check errors or does not answer by the review's deadline, more
// images than a review may name, an exception from the checker, all deny. With a readable
// uid the answer is HTTP 200 with allowed=false (the API server reads it); without one,
// 400 (it cannot be matched to a request, so the failurePolicy applies).
//
// The images of one review are checked together: every check is started, then collected
// against one deadline, so a review answers in time however many images sit on a
// registry that does not answer.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "oci/result.h"
#include "policy/evaluate.h"

namespace imgtool::admission {

// Checks one pod-spec image against the policy. `pin`: evaluate the reference rewritten
// to the digest it resolves to (the mutating mode, where the pod will run the digest);
// otherwise the reference as written (so digestPinned sees a tag). The decision's digest
// is the resolved one (empty when resolution failed). An error: the check could not run.
using ImageChecker = std::function<Result<policy::ImageDecision>(const std::string& image, bool pin)>;

// A check under way: waits for its decision until `deadline` and returns by then; nullopt
// when none came (the work carries on elsewhere, and may fill a cache for the next review).
using PendingCheck =
    std::function<std::optional<Result<policy::ImageDecision>>(std::chrono::steady_clock::time_point deadline)>;
// Starts checking one image and returns at once (the work runs elsewhere).
using CheckStarter = std::function<PendingCheck(const std::string& image, bool pin)>;

// For a checker that answers at once (tests, checks with no I/O): it runs when started.
CheckStarter AnswerAtOnce(ImageChecker check);

enum class Mode { kValidate, kMutate };

struct ReviewLimits {
  // From the start of the decision; under the API server's timeoutSeconds (at most 10 s,
  // for the whole HTTP exchange), so the answer is read rather than timed out.
  std::chrono::milliseconds deadline{std::chrono::seconds(9)};
  size_t max_images = 256;  // containers + initContainers + ephemeralContainers
};

// Why a review was denied, as a small fixed set (the reason label of the reviews metric):
// kNone (allowed), kPolicy (a rule failed on an image that was opened), kRegistry (an image
// could not be resolved or opened, or its check failed), kCapacity (no registry-check slot
// by the deadline), kDeadline (no answer by the deadline), kTooManyImages, kMalformed (the
// request itself: not JSON, no uid, a kind without a pod spec), kInternal (an exception).
// With several causes the first in this order wins: malformed, too_many_images, internal,
// deadline, capacity, registry, policy.
enum class Reason { kNone, kPolicy, kRegistry, kCapacity, kDeadline, kTooManyImages, kMalformed, kInternal };
std::string ReasonName(Reason r);  // "none", "policy", ..., "too_many_images"

struct Answer {
  int http_status = 200;
  std::string body;  // JSON
  // What the logs and metrics say of it (the body says it to the API server).
  std::string uid;       // empty when unreadable
  std::string kind;      // request.kind.kind
  std::string name;      // namespace/name
  bool allowed = false;  // the policy's verdict (in warn and audit modes, not what was answered)
  bool enforced = true;  // the body answers the verdict (false: warn/audit allowed a denial)
  Reason reason = Reason::kNone;
  std::vector<std::string> images;      // distinct, as written in the pod spec
  std::vector<std::string> violations;  // one per image and failed rule: "containers[0] (app) image X: rule: why"
};

Answer Decide(const std::string& body, const CheckStarter& start, Mode mode, const ReviewLimits& limits = {});

// What the webhook does with a denial (--mode). kEnforce answers it. kWarn answers
// allowed:true with one AdmissionReview `warnings` entry per violation (each cut to 256
// bytes, 4,096 in all: what the API server passes on). kAudit answers allowed:true with no
// warnings; the log line and metrics keep the verdict. A malformed request is denied in
// every mode: it is not a pod the policy judged but a request nothing can be said of.
enum class Enforcement { kEnforce, kWarn, kAudit };
std::string EnforcementName(Enforcement e);  // "enforce", "warn", "audit"
Result<Enforcement> ParseEnforcement(const std::string& text);
Answer Enforce(Answer answer, Enforcement e);

// "image@sha256:..." for a pod-spec image and the digest it resolved to; the tag is dropped.
std::string PinImage(const std::string& image, const std::string& digest);

// "9 s", "1.5 s", "0.2 s": a deadline as the denials say it.
std::string Seconds(std::chrono::milliseconds d);

}  // namespace imgtool::admission
