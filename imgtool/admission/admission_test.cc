// The pure admission logic: images out of every pod-spec kind, the answer's shape, fail
// closed on bad input and on checker errors, JSONPatch for the mutating mode; the review
// deadline (checks that never answer, with a fake and with the registry checker against
// a listener that accepts and stalls) and the image cap; the TTL cache with a fake clock
// and its work limit; --listen parsing.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <stdexcept>
#include <thread>

#include "admission/cache.h"
#include "admission/checker.h"
#include "admission/decide.h"
#include "admission/review.h"
#include "admission/server.h"
#include "oci/base64.h"

namespace imgtool::admission {
namespace {

using oci::Json;

Json Container(const std::string& name, const std::string& image) { return {{"name", name}, {"image", image}}; }

Json PodSpec() {
  return {{"initContainers", {Container("setup", "reg:5000/init:v1")}},
          {"containers", {Container("app", "reg:5000/app@sha256:" + std::string(64, 'a')), Container("side", "side")}}};
}

Json Review(const std::string& kind, const Json& object, const std::string& uid = "u-1") {
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", uid},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", kind}}},
            {"operation", "CREATE"},
            {"namespace", "ns"},
            {"name", "x"},
            {"object", object}}}};
}

policy::ImageDecision Decision(const std::string& image, bool pass, const std::string& digest = "") {
  policy::ImageDecision d;
  d.reference = image;
  d.digest = digest;
  d.pass = pass;
  d.rules.push_back({"nonRoot", pass, pass ? "uid 10001" : "config User '0:0' is uid 0 (root)"});
  return d;
}

// An ImageChecker over a map: image -> pass; records what it was asked.
struct FakeChecker {
  std::map<std::string, bool> pass;
  std::vector<std::pair<std::string, bool>> asked;
  ImageChecker fn() {
    return [this](const std::string& image, bool pin) -> Result<policy::ImageDecision> {
      asked.emplace_back(image, pin);
      auto it = pass.find(image);
      if (it == pass.end()) return MakeError(ErrorKind::kTransport, "registry down");
      return Decision(image, it->second, "sha256:" + std::string(64, 'b'));
    };
  }
};

Json Body(const Answer& a) { return Json::parse(a.body); }

TEST(Extract, PodListsInitContainersAndEphemeral) {
  Json spec = PodSpec();
  spec["ephemeralContainers"] = {Container("debug", "busybox:1.36")};
  auto images = ExtractImages("Pod", {{"spec", spec}});
  ASSERT_TRUE(images.ok()) << images.error().message;
  ASSERT_EQ(images->size(), 4u);
  EXPECT_EQ((*images)[0].image, "reg:5000/init:v1");
  EXPECT_EQ((*images)[0].pointer, "/spec/initContainers/0/image");
  EXPECT_EQ((*images)[0].where, "initContainers[0] (setup)");
  EXPECT_EQ((*images)[2].pointer, "/spec/containers/1/image");
  EXPECT_EQ((*images)[3].pointer, "/spec/ephemeralContainers/0/image");
}

TEST(Extract, TemplatesOfEveryWorkloadKind) {
  Json tmpl = {{"spec", {{"template", {{"spec", PodSpec()}}}}}};
  for (const char* kind : {"Deployment", "Job", "StatefulSet", "ReplicaSet", "DaemonSet"}) {
    auto images = ExtractImages(kind, tmpl);
    ASSERT_TRUE(images.ok()) << kind << ": " << images.error().message;
    ASSERT_EQ(images->size(), 3u) << kind;
    EXPECT_EQ((*images)[1].pointer, "/spec/template/spec/containers/0/image") << kind;
  }
  Json cron = {{"spec", {{"jobTemplate", tmpl}}}};
  auto images = ExtractImages("CronJob", cron);
  ASSERT_TRUE(images.ok()) << images.error().message;
  EXPECT_EQ((*images)[0].pointer, "/spec/jobTemplate/spec/template/spec/initContainers/0/image");
}

TEST(Extract, RefusesOtherKindsAndBadShapes) {
  auto cm = ExtractImages("ConfigMap", {{"data", {}}});
  ASSERT_FALSE(cm.ok());
  EXPECT_EQ(cm.error().message,
            "AdmissionReview: $.request.kind.kind: 'ConfigMap' has no pod spec this webhook checks");
  auto nospec = ExtractImages("Deployment", {{"spec", {{"replicas", 1}}}});
  ASSERT_FALSE(nospec.ok());
  EXPECT_EQ(nospec.error().message, "AdmissionReview: $.request.object/spec/template/spec: missing pod spec");
  auto noimage = ExtractImages("Pod", {{"spec", {{"containers", {{{"name", "a"}}}}}}});
  ASSERT_FALSE(noimage.ok());
  EXPECT_EQ(noimage.error().message,
            "AdmissionReview: $.request.object/spec/containers/0/image: missing or not a string");
  auto empty = ExtractImages("Pod", {{"spec", {{"containers", Json::array()}}}});
  ASSERT_FALSE(empty.ok());
}

TEST(DockerReference, NormalizesAsTheRuntimeDoes) {
  EXPECT_EQ(*DockerReference("127.0.0.1:5000/team/img:v1"), "docker://127.0.0.1:5000/team/img:v1");
  EXPECT_EQ(*DockerReference("127.0.0.1:5000/team/img"), "docker://127.0.0.1:5000/team/img:latest");
  EXPECT_EQ(*DockerReference("nginx"), "docker://docker.io/library/nginx:latest");
  EXPECT_EQ(*DockerReference("team/app:1"), "docker://docker.io/team/app:1");
  EXPECT_EQ(*DockerReference("localhost/app:1"), "docker://localhost/app:1");
  std::string d = "sha256:" + std::string(64, 'c');
  EXPECT_EQ(*DockerReference("reg:5000/a/b:v1@" + d), "docker://reg:5000/a/b@" + d);
  EXPECT_FALSE(DockerReference("docker://reg/a:v1").ok());
  EXPECT_FALSE(DockerReference("reg:5000/UPPER:v1").ok());
  EXPECT_FALSE(DockerReference("reg:5000/a@sha256:short").ok());
  // Docker Hub's names, as the runtime spells them out.
  EXPECT_EQ(*DockerReference("docker.io/nginx"), "docker://docker.io/library/nginx:latest");
  EXPECT_EQ(*DockerReference("index.docker.io/team/app:2"), "docker://docker.io/team/app:2");
  EXPECT_EQ(*DockerReference("nginx:1.25@" + d), "docker://docker.io/library/nginx@" + d);
  EXPECT_EQ(*DockerReference("[::1]:5000/app"), "docker://[::1]:5000/app:latest");
  EXPECT_EQ(DockerReference("team/App").error().message, "image 'team/App': repository 'team/App' must be lowercase");
  EXPECT_EQ(DockerReference("nginx@sha512:" + std::string(128, 'c')).error().message,
            "image 'nginx@sha512:" + std::string(128, 'c') + "': unsupported digest algorithm 'sha512' (only sha256)");
}

TEST(Decide, AllowedEchoesUidAndShape) {
  FakeChecker c;
  c.pass = {{"reg:5000/init:v1", true}, {"reg:5000/app@sha256:" + std::string(64, 'a'), true}, {"side", true}};
  Answer a = Decide(Review("Pod", {{"spec", PodSpec()}}, "abc-123").dump(), AnswerAtOnce(c.fn()), Mode::kValidate);
  EXPECT_EQ(a.http_status, 200);
  Json j = Body(a);
  EXPECT_EQ(j["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(j["kind"], "AdmissionReview");
  EXPECT_EQ(j["response"]["uid"], "abc-123");
  EXPECT_EQ(j["response"]["allowed"], true);
  EXPECT_EQ(j["response"]["status"]["code"], 200);
  EXPECT_EQ(j["response"]["status"]["message"], "Pod ns/x: 3 image(s) allowed");
  EXPECT_FALSE(j["response"].contains("patch"));
  ASSERT_EQ(c.asked.size(), 3u);
  EXPECT_FALSE(c.asked[0].second);  // validate: judged as written
}

TEST(Decide, DeniedListsEveryViolation) {
  FakeChecker c;
  c.pass = {{"reg:5000/init:v1", false}, {"reg:5000/app@sha256:" + std::string(64, 'a'), true}};  // "side": error
  Json tmpl = {{"spec", {{"template", {{"spec", PodSpec()}}}}}};
  Answer a = Decide(Review("Deployment", tmpl).dump(), AnswerAtOnce(c.fn()), Mode::kValidate);
  EXPECT_EQ(a.http_status, 200);
  Json j = Body(a);
  EXPECT_EQ(j["response"]["allowed"], false);
  EXPECT_EQ(j["response"]["status"]["code"], 403);
  EXPECT_EQ(j["response"]["status"]["message"],
            "Deployment ns/x: denied by policy: 2 violation(s): initContainers[0] (setup) image reg:5000/init:v1: "
            "nonRoot: config User '0:0' is uid 0 (root); containers[1] (side) image side: check failed: registry down");
}

TEST(Decide, MalformedJsonIs400) {
  FakeChecker c;
  Answer a = Decide("{not json", AnswerAtOnce(c.fn()), Mode::kValidate);
  EXPECT_EQ(a.http_status, 400);
  Json j = Body(a);
  EXPECT_EQ(j["response"]["allowed"], false);
  EXPECT_EQ(j["response"]["status"]["message"], "AdmissionReview: the body is not JSON");
  EXPECT_TRUE(c.asked.empty());
}

// Issue 24: a review nested 200,000 deep is refused by the JSON depth cap, named as such.
TEST(Decide, ReviewNestedPastTheCapIs400) {
  FakeChecker c;
  std::string deep = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","x":)" +
                     std::string(200'000, '[') + std::string(200'000, ']') + "}}";
  Answer a = Decide(deep, AnswerAtOnce(c.fn()), Mode::kValidate);
  EXPECT_EQ(a.http_status, 400);
  EXPECT_EQ(Body(a)["response"]["status"]["message"],
            "AdmissionReview: nested deeper than " + std::to_string(oci::kMaxJsonDepth) + " levels");
  EXPECT_TRUE(c.asked.empty());
}

TEST(Decide, MissingUidIs400) {
  FakeChecker c;
  Json r = Review("Pod", {{"spec", PodSpec()}});
  r["request"].erase("uid");
  Answer a = Decide(r.dump(), AnswerAtOnce(c.fn()), Mode::kValidate);
  EXPECT_EQ(a.http_status, 400);
  EXPECT_EQ(Body(a)["response"]["status"]["message"], "AdmissionReview: $.request.uid: missing or not a string");
}

TEST(Decide, WrongEnvelopeWithUidIsADenial) {
  FakeChecker c;
  Json r = Review("Pod", {{"spec", PodSpec()}}, "u-9");
  r["apiVersion"] = "admission.k8s.io/v1beta1";
  Answer a = Decide(r.dump(), AnswerAtOnce(c.fn()), Mode::kValidate);
  EXPECT_EQ(a.http_status, 200);
  Json j = Body(a);
  EXPECT_EQ(j["response"]["uid"], "u-9");
  EXPECT_EQ(j["response"]["allowed"], false);
  EXPECT_EQ(j["response"]["status"]["message"],
            "AdmissionReview: $.apiVersion: want admission.k8s.io/v1, got 'admission.k8s.io/v1beta1'");
  r["apiVersion"] = "admission.k8s.io/v1";
  r["kind"] = "Pod";
  EXPECT_EQ(Body(Decide(r.dump(), AnswerAtOnce(c.fn()), Mode::kValidate))["response"]["allowed"], false);
}

TEST(Decide, WrongResourceKindDenies) {
  FakeChecker c;
  Answer a =
      Decide(Review("ConfigMap", {{"data", Json::object()}}, "u-2").dump(), AnswerAtOnce(c.fn()), Mode::kValidate);
  Json j = Body(a);
  EXPECT_EQ(a.http_status, 200);
  EXPECT_EQ(j["response"]["uid"], "u-2");
  EXPECT_EQ(j["response"]["allowed"], false);
  EXPECT_EQ(j["response"]["status"]["code"], 400);
}

TEST(Decide, DeleteIsAllowed) {
  FakeChecker c;
  Json r = Review("Pod", nullptr);
  r["request"]["operation"] = "DELETE";
  EXPECT_EQ(Body(Decide(r.dump(), AnswerAtOnce(c.fn()), Mode::kValidate))["response"]["allowed"], true);
}

TEST(Decide, InternalErrorDenies) {
  ImageChecker boom = [](const std::string&, bool) -> Result<policy::ImageDecision> {
    throw std::runtime_error("out of file descriptors");
  };
  Answer a = Decide(Review("Pod", {{"spec", PodSpec()}}, "u-3").dump(), AnswerAtOnce(boom), Mode::kValidate);
  Json j = Body(a);
  EXPECT_EQ(a.http_status, 200);
  EXPECT_EQ(j["response"]["uid"], "u-3");
  EXPECT_EQ(j["response"]["allowed"], false);
  EXPECT_EQ(j["response"]["status"]["code"], 500);
  EXPECT_EQ(j["response"]["status"]["message"], "internal error: out of file descriptors");
  // A decision with no rules at all is no evidence.
  ImageChecker empty = [](const std::string& image, bool) -> Result<policy::ImageDecision> {
    policy::ImageDecision d;
    d.reference = image;
    return d;
  };
  EXPECT_EQ(Body(Decide(Review("Pod", {{"spec", PodSpec()}}).dump(), AnswerAtOnce(empty),
                        Mode::kValidate))["response"]["allowed"],
            false);
}

TEST(Decide, MutatePatchesTagsToDigests) {
  FakeChecker c;
  c.pass = {{"reg:5000/init:v1", true}, {"reg:5000/app@sha256:" + std::string(64, 'a'), true}, {"side", true}};
  Json tmpl = {{"spec", {{"template", {{"spec", PodSpec()}}}}}};
  Answer a = Decide(Review("Job", tmpl).dump(), AnswerAtOnce(c.fn()), Mode::kMutate);
  Json j = Body(a);
  EXPECT_EQ(j["response"]["allowed"], true);
  EXPECT_EQ(j["response"]["patchType"], "JSONPatch");
  auto raw = oci::Base64Decode(j["response"]["patch"].get<std::string>(), "patch");
  ASSERT_TRUE(raw.ok());
  std::string b = "sha256:" + std::string(64, 'b');
  // The already-pinned image is left alone (the fake resolves everything to b..., a pinned
  // image keeps the digest it names).
  Json want = Json::array(
      {{{"op", "replace"}, {"path", "/spec/template/spec/initContainers/0/image"}, {"value", "reg:5000/init@" + b}},
       {{"op", "replace"}, {"path", "/spec/template/spec/containers/0/image"}, {"value", "reg:5000/app@" + b}},
       {{"op", "replace"}, {"path", "/spec/template/spec/containers/1/image"}, {"value", "side@" + b}}});
  EXPECT_EQ(Json::parse(*raw), want);
  for (const auto& [image, pin] : c.asked) EXPECT_TRUE(pin) << image;
  // A patch is applied to the original: applying it pins every image.
  Json patched = tmpl.patch(Json::parse(*raw));
  EXPECT_EQ(patched["spec"]["template"]["spec"]["containers"][1]["image"], "side@" + b);
}

TEST(Decide, MutateDeniedHasNoPatch) {
  FakeChecker c;
  c.pass = {{"reg:5000/init:v1", false}, {"reg:5000/app@sha256:" + std::string(64, 'a'), true}, {"side", true}};
  Json j = Body(Decide(Review("Pod", {{"spec", PodSpec()}}).dump(), AnswerAtOnce(c.fn()), Mode::kMutate));
  EXPECT_EQ(j["response"]["allowed"], false);
  EXPECT_FALSE(j["response"].contains("patch"));
}

TEST(PinImage, DropsTheTagKeepsThePort) {
  std::string d = "sha256:" + std::string(64, 'e');
  EXPECT_EQ(PinImage("127.0.0.1:5000/team/img:v1", d), "127.0.0.1:5000/team/img@" + d);
  EXPECT_EQ(PinImage("127.0.0.1:5000/team/img", d), "127.0.0.1:5000/team/img@" + d);
  EXPECT_EQ(PinImage("nginx:1.25", d), "nginx@" + d);
  EXPECT_EQ(PinImage("a/b:v1@sha256:" + std::string(64, '0'), d), "a/b@" + d);
}

struct FakeClock {
  std::chrono::steady_clock::time_point now{};
  Clock fn() {
    return [this] { return now; };
  }
};

TEST(TtlCache, SharesOneComputationAndExpires) {
  FakeClock clock;
  TtlCache<int> cache(std::chrono::seconds(30), clock.fn());
  std::atomic<int> calls{0};
  auto compute = [&calls]() -> std::pair<int, bool> { return {++calls, true}; };
  EXPECT_EQ(cache.Get("k", compute)->get(), 1);
  EXPECT_EQ(cache.Get("k", compute)->get(), 1);
  clock.now += std::chrono::seconds(29);
  EXPECT_EQ(cache.Get("k", compute)->get(), 1);
  clock.now += std::chrono::seconds(2);
  EXPECT_EQ(cache.Get("k", compute)->get(), 2);
  EXPECT_EQ(cache.Get("other", compute)->get(), 3);
}

TEST(TtlCache, ForgetsWhatIsNotCacheable) {
  FakeClock clock;
  TtlCache<int> cache(std::chrono::seconds(30), clock.fn());
  std::atomic<int> calls{0};
  auto compute = [&calls]() -> std::pair<int, bool> { return {++calls, false}; };
  EXPECT_EQ(cache.Get("k", compute)->get(), 1);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.Get("k", compute)->get(), 2);
}

TEST(TtlCache, ConcurrentCallersWaitForTheFirst) {
  TtlCache<int> cache(std::chrono::seconds(30));
  std::promise<void> gate;
  auto opened = gate.get_future().share();
  std::atomic<int> calls{0};
  auto compute = [&calls, opened]() -> std::pair<int, bool> {
    opened.wait();
    return {++calls, true};
  };
  auto a = *cache.Get("k", compute);
  auto b = *cache.Get("k", compute);
  EXPECT_EQ(b.wait_for(std::chrono::milliseconds(20)), std::future_status::timeout);
  gate.set_value();
  EXPECT_EQ(a.get(), 1);
  EXPECT_EQ(b.get(), 1);
  EXPECT_EQ(calls.load(), 1);
}

TEST(Listen, Forms) {
  ServerOptions o;
  ASSERT_TRUE(ParseListen("127.0.0.1:8443", o).ok());
  EXPECT_EQ(o.host, "127.0.0.1");
  EXPECT_EQ(o.port, 8443);
  ASSERT_TRUE(ParseListen(":9443", o).ok());
  EXPECT_EQ(o.host, "0.0.0.0");
  ASSERT_TRUE(ParseListen("[::1]:8443", o).ok());
  EXPECT_EQ(o.host, "::1");
  EXPECT_FALSE(ParseListen("8443", o).ok());
  EXPECT_FALSE(ParseListen("h:99999", o).ok());
  EXPECT_FALSE(ParseListen("h:x", o).ok());
}

// ---- the review deadline ----

using std::chrono::milliseconds;
using std::chrono::steady_clock;

Json ManyImages(const std::vector<std::string>& images) {
  Json containers = Json::array();
  for (size_t i = 0; i < images.size(); ++i) containers.push_back(Container("c" + std::to_string(i), images[i]));
  return {{"spec", {{"containers", containers}}}};
}

std::vector<std::string> Silent(const std::string& host, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(host + "/team/img" + std::to_string(i) + ":v1");
  return out;
}

// Answers the images in `answers` at once; every other image never answers (its wait
// returns only at the deadline, as a registry check that is still running does).
struct SilentChecker {
  std::map<std::string, bool> answers;
  std::atomic<int> started{0};
  CheckStarter fn() {
    return [this](const std::string& image, bool) -> PendingCheck {
      ++started;
      auto it = answers.find(image);
      if (it == answers.end()) {
        return [](steady_clock::time_point deadline) -> std::optional<Result<policy::ImageDecision>> {
          std::this_thread::sleep_until(deadline);
          return std::nullopt;
        };
      }
      auto d = Decision(image, it->second, "sha256:" + std::string(64, 'b'));
      return [d](steady_clock::time_point) -> std::optional<Result<policy::ImageDecision>> { return d; };
    };
  }
};

TEST(ReviewDeadline, FiftySilentImagesAreDeniedInTime) {
  auto images = Silent("silent:5000", 50);
  images.push_back("reg:5000/good@sha256:" + std::string(64, 'a'));
  images.push_back("reg:5000/root@sha256:" + std::string(64, 'a'));
  SilentChecker c;
  c.answers = {{images[50], true}, {images[51], false}};
  ReviewLimits limits;
  limits.deadline = milliseconds(300);
  auto t0 = steady_clock::now();
  Answer a = Decide(Review("Pod", ManyImages(images), "u-slow").dump(), c.fn(), Mode::kValidate, limits);
  auto took = steady_clock::now() - t0;
  // One deadline for the review, not 300 ms per image (that would be 15 s).
  EXPECT_GE(took, milliseconds(300));
  EXPECT_LT(took, milliseconds(1500));
  EXPECT_EQ(c.started.load(), 52);
  Json j = Body(a);
  EXPECT_EQ(j["response"]["uid"], "u-slow");
  EXPECT_EQ(j["response"]["allowed"], false);
  EXPECT_EQ(j["response"]["status"]["code"], 403);
  std::string want = "Pod ns/x: denied by policy: 51 violation(s): ";
  for (int i = 0; i < 50; ++i) {
    want += "containers[" + std::to_string(i) + "] (c" + std::to_string(i) + ") image " + images[i] +
            ": no answer from the registry within 0.3 s; ";
  }
  // The images that answered are judged as ever: the good one passes, the root one is named.
  want += "containers[51] (c51) image " + images[51] + ": nonRoot: config User '0:0' is uid 0 (root)";
  EXPECT_EQ(j["response"]["status"]["message"], want);
}

TEST(ReviewDeadline, AnImageNamedTwiceIsCheckedOnce) {
  SilentChecker c;
  std::string img = "reg:5000/good@sha256:" + std::string(64, 'a');
  c.answers = {{img, true}};
  Answer a = Decide(Review("Pod", ManyImages({img, img, img})).dump(), c.fn(), Mode::kValidate);
  EXPECT_EQ(Body(a)["response"]["status"]["message"], "Pod ns/x: 3 image(s) allowed");
  EXPECT_EQ(c.started.load(), 1);
}

TEST(ReviewDeadline, MoreImagesThanTheCapDenyTheReview) {
  SilentChecker c;
  ReviewLimits limits;
  limits.max_images = 256;
  Answer a =
      Decide(Review("Pod", ManyImages(Silent("reg:5000", 257)), "u-many").dump(), c.fn(), Mode::kValidate, limits);
  Json j = Body(a);
  EXPECT_EQ(j["response"]["uid"], "u-many");
  EXPECT_EQ(j["response"]["allowed"], false);
  EXPECT_EQ(j["response"]["status"]["code"], 403);
  EXPECT_EQ(j["response"]["status"]["message"], "Pod ns/x: denied: 257 images, more than the 256 one review may name");
  EXPECT_EQ(c.started.load(), 0);  // none checked
  auto ok = Decide(Review("Pod", ManyImages(Silent("reg:5000", 256))).dump(),
                   AnswerAtOnce([](const std::string& image, bool) -> Result<policy::ImageDecision> {
                     return Decision(image, true);
                   }),
                   Mode::kValidate, limits);
  EXPECT_EQ(Body(ok)["response"]["status"]["message"], "Pod ns/x: 256 image(s) allowed");
}

TEST(ReviewDeadline, SecondsAsTheDenialSaysThem) {
  EXPECT_EQ(Seconds(milliseconds(9000)), "9 s");
  EXPECT_EQ(Seconds(milliseconds(1500)), "1.5 s");
  EXPECT_EQ(Seconds(milliseconds(250)), "0.25 s");
}

// A "registry" on 127.0.0.1 that accepts every connection and never sends a byte.
class StallingListener {
 public:
  StallingListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), len), 0);
    EXPECT_EQ(::listen(fd_, 128), 0);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      for (int c; (c = ::accept(fd_, nullptr, nullptr)) >= 0; ++accepted_) held_.push_back(c);
    });
  }
  ~StallingListener() {
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    for (int c : held_) ::close(c);
    ::close(fd_);
  }
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
  size_t accepted() const { return accepted_.load(); }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::vector<int> held_;  // the accepting thread's until it is joined
  std::atomic<size_t> accepted_{0};
};

RegistryImageChecker StallChecker(size_t max_work) {
  auto pol = policy::ParsePolicy(R"({"policyVersion": 1, "rules": {"nonRoot": {}}})", ".", "policy.json");
  EXPECT_TRUE(pol.ok()) << pol.error().message;
  remote::RegistryOptions reg;
  reg.tls_verify = false;
  reg.max_attempts = 1;
  reg.timeouts = remote::NetTimeouts{3, 3, 3};  // the computations end soon after the test
  CheckerOptions co;
  co.max_registry_work = max_work;
  return RegistryImageChecker(*pol, reg, co);
}

TEST(ReviewDeadline, RegistryThatAcceptsAndStallsIsDeniedInTime) {
  StallingListener silent;
  auto checker = StallChecker(128);
  auto images = Silent(silent.host(), 50);
  ReviewLimits limits;
  limits.deadline = milliseconds(1000);
  auto t0 = steady_clock::now();
  Answer a = Decide(Review("Pod", ManyImages(images)).dump(), checker.AsStarter(), Mode::kValidate, limits);
  auto took = steady_clock::now() - t0;
  EXPECT_LT(took, milliseconds(2000));
  EXPECT_GE(silent.accepted(), 50u);  // every check reached the registry at once
  std::string msg = Body(a)["response"]["status"]["message"];
  std::string want = "Pod ns/x: denied by policy: 50 violation(s): ";
  for (int i = 0; i < 50; ++i) {
    want += std::string(i ? "; " : "") + "containers[" + std::to_string(i) + "] (c" + std::to_string(i) + ") image " +
            images[i] + ": no answer from the registry within 1 s";
  }
  EXPECT_EQ(msg, want);
  // The checks end at the registry client's 3 s timeouts; the process must not exit first.
  EXPECT_TRUE(checker.WaitForRegistryWork(std::chrono::seconds(10)));
  EXPECT_EQ(checker.RegistryWorkRunning(), 0u);
}

TEST(ReviewDeadline, RegistryWorkBeyondTheCapWaitsUntilTheDeadline) {
  StallingListener silent;
  auto checker = StallChecker(10);  // 5 per registry
  auto images = Silent(silent.host(), 8);
  ReviewLimits limits;
  limits.deadline = milliseconds(500);
  auto t0 = steady_clock::now();
  Json j = Body(Decide(Review("Pod", ManyImages(images)).dump(), checker.AsStarter(), Mode::kValidate, limits));
  EXPECT_LT(steady_clock::now() - t0, milliseconds(1500));
  std::string msg = j["response"]["status"]["message"];
  // Five checks run (and time out); the other three wait for one of them to end, in vain.
  for (int i = 0; i < 8; ++i) {
    std::string who = "image " + images[i] + ": ";
    std::string why = i < 5 ? who + "no answer from the registry within 0.5 s"
                            : who + "nonRoot: cannot open the image: resolving docker://" + images[i] +
                                  ": registry checks at capacity until the deadline (10 at once, 5 per registry)";
    EXPECT_NE(msg.find(why), std::string::npos) << why << "\nin: " << msg;
  }
  EXPECT_TRUE(checker.WaitForRegistryWork(std::chrono::seconds(10)));
}

TEST(WorkLimit, CapsComputationsInAllAndPerGroup) {
  auto limit = std::make_shared<WorkLimit>(2, 1);
  TtlCache<int> a(std::chrono::seconds(30), SteadyClock(), 100, limit);
  TtlCache<int> b(std::chrono::seconds(30), SteadyClock(), 100, limit);
  std::promise<void> gate;
  auto opened = gate.get_future().share();
  auto slow = [opened]() -> std::pair<int, bool> {
    opened.wait();
    return {1, true};
  };
  auto first = a.Get("k", slow, "reg-1");
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(a.Get("k", slow, "reg-1").has_value());       // the same key joins the running computation
  EXPECT_FALSE(b.Get("other", slow, "reg-1").has_value());  // reg-1 has its one
  auto second = b.Get("other", slow, "reg-2");
  ASSERT_TRUE(second.has_value());
  EXPECT_FALSE(a.Get("third", slow, "reg-3").has_value());  // two in all
  EXPECT_EQ(limit->running(), 2u);
  EXPECT_FALSE(limit->WaitForRoom("reg-1", steady_clock::now() + milliseconds(20)));
  std::thread later([&gate] {
    std::this_thread::sleep_for(milliseconds(50));
    gate.set_value();
  });
  EXPECT_TRUE(limit->WaitForRoom("reg-1", steady_clock::now() + milliseconds(5000)));
  later.join();
  EXPECT_EQ(first->get(), 1);
  EXPECT_EQ(second->get(), 1);
  for (int i = 0; i < 100 && limit->running() != 0; ++i) std::this_thread::sleep_for(milliseconds(5));
  auto again = b.Get("third", slow, "reg-1");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->get(), 1);
}

}  // namespace
}  // namespace imgtool::admission
