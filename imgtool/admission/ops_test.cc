// What an operator relies on: the metrics text (exact), --mode's answers, the reason
// classes, the review log line, and the policy sets' swap (a review keeps the policy it
// began with; a broken file keeps the old policy; a rewrite of the same bytes is no reload).
#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "admission/decide.h"
#include "admission/file_watch.h"
#include "admission/metrics.h"
#include "admission/observe.h"
#include "admission/policy_sets.h"

namespace imgtool::admission {
namespace {

using oci::Json;

TEST(Metrics, RendersTheTextFormat) {
  MetricRegistry m;
  m.DeclareCounter("t_reviews_total", "Reviews.\nSecond line \\ here");
  m.DeclareGauge("t_in_flight", "In flight");
  m.DeclareHistogram("t_seconds", "Duration", {0.01, 0.1});
  m.Add("t_reviews_total", {{"verdict", "denied"}, {"reason", "a\"b\\c\nd"}});
  m.Add("t_reviews_total", {{"verdict", "denied"}, {"reason", "a\"b\\c\nd"}}, 2);
  m.Set("t_in_flight", {}, 3);
  m.Observe("t_seconds", {{"set", "gpu"}}, 0.005);
  m.Observe("t_seconds", {{"set", "gpu"}}, 0.05);
  m.Observe("t_seconds", {{"set", "gpu"}}, 7);
  m.Add("t_unknown", {});  // undeclared: ignored
  EXPECT_EQ(m.Render(),
            "# HELP t_in_flight In flight\n"
            "# TYPE t_in_flight gauge\n"
            "t_in_flight 3\n"
            "# HELP t_reviews_total Reviews.\\nSecond line \\\\ here\n"
            "# TYPE t_reviews_total counter\n"
            "t_reviews_total{verdict=\"denied\",reason=\"a\\\"b\\\\c\\nd\"} 3\n"
            "# HELP t_seconds Duration\n"
            "# TYPE t_seconds histogram\n"
            "t_seconds_bucket{set=\"gpu\",le=\"0.01\"} 1\n"
            "t_seconds_bucket{set=\"gpu\",le=\"0.1\"} 2\n"
            "t_seconds_bucket{set=\"gpu\",le=\"+Inf\"} 3\n"
            "t_seconds_sum{set=\"gpu\"} 7.055\n"
            "t_seconds_count{set=\"gpu\"} 3\n");
  EXPECT_EQ(m.Value("t_reviews_total", {{"verdict", "denied"}, {"reason", "a\"b\\c\nd"}}), 3);
}

TEST(Metrics, OnScrapeSetsGaugesBeforeRendering) {
  MetricRegistry m;
  m.DeclareGauge("g", "G");
  int scrapes = 0;
  m.OnScrape([&scrapes](MetricRegistry& r) { r.Set("g", {{"cache", "tag"}}, ++scrapes); });
  EXPECT_NE(m.Render().find("g{cache=\"tag\"} 1\n"), std::string::npos);
  EXPECT_NE(m.Render().find("g{cache=\"tag\"} 2\n"), std::string::npos);
}

TEST(Metrics, FormatsValues) {
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(2.5), "2.5");
  EXPECT_EQ(FormatValue(10), "10");
  EXPECT_EQ(FormatValue(1.0 / 0.0), "+Inf");
}

Json Review(const std::string& image, const std::string& uid = "u-1") {
  Json pod = {{"spec", {{"containers", {{{"name", "app"}, {"image", image}}}}}}};
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", uid},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"operation", "CREATE"},
            {"namespace", "ns"},
            {"name", "x"},
            {"object", pod}}}};
}

// Every image fails nonRoot (or, named "down", cannot be opened; "busy": no slot).
CheckStarter Failing() {
  return AnswerAtOnce([](const std::string& image, bool) -> Result<policy::ImageDecision> {
    policy::ImageDecision d;
    d.reference = image;
    std::string why = "config User '0:0' is uid 0 (root)";
    if (image == "down") why = "cannot open the image: resolving docker://down: connection refused";
    if (image == "busy") why = "cannot open the image: registry checks at capacity until the deadline";
    d.rules.push_back({"nonRoot", false, why});
    d.rules.push_back({"noSetuid", true, "none"});
    return d;
  });
}

TEST(Modes, EnforceAnswersTheDenial) {
  Answer a = Enforce(Decide(Review("img").dump(), Failing(), Mode::kValidate), Enforcement::kEnforce);
  Json j = Json::parse(a.body);
  EXPECT_EQ(j["response"]["allowed"], false);
  EXPECT_FALSE(j["response"].contains("warnings"));
  EXPECT_TRUE(a.enforced);
  EXPECT_EQ(a.reason, Reason::kPolicy);
}

TEST(Modes, WarnAllowsWithAWarningPerViolation) {
  Answer a = Enforce(Decide(Review("img").dump(), Failing(), Mode::kValidate), Enforcement::kWarn);
  Json j = Json::parse(a.body);
  EXPECT_EQ(j["response"]["uid"], "u-1");
  EXPECT_EQ(j["response"]["allowed"], true);
  EXPECT_EQ(j["response"]["warnings"],
            Json::array({"containers[0] (app) image img: nonRoot: config User '0:0' is uid 0 (root)"}));
  EXPECT_EQ(j["response"]["status"]["message"],
            "warn mode, allowed; enforcing would deny: Pod ns/x: denied by policy: 1 violation(s): containers[0] "
            "(app) image img: nonRoot: config User '0:0' is uid 0 (root)");
  EXPECT_FALSE(a.allowed);  // the verdict, for logs and metrics
  EXPECT_FALSE(a.enforced);
}

TEST(Modes, WarningsAreCutToWhatTheApiServerPassesOn) {
  std::string image = "reg/" + std::string(400, 'x');
  Json pod = Review(image);
  for (int i = 0; i < 40; ++i) {
    pod["request"]["object"]["spec"]["containers"].push_back(
        {{"name", "c" + std::to_string(i)}, {"image", image + std::to_string(i)}});
  }
  Answer a = Enforce(Decide(pod.dump(), Failing(), Mode::kValidate), Enforcement::kWarn);
  Json w = Json::parse(a.body)["response"]["warnings"];
  size_t total = 0;
  for (const auto& s : w) {
    EXPECT_LE(s.get<std::string>().size(), 256u);
    total += s.get<std::string>().size();
  }
  EXPECT_LE(total, 4096u);
  EXPECT_EQ(w.back(), std::to_string(41 - (w.size() - 1)) + " more violation(s) not shown");
}

TEST(Modes, AuditAllowsWithoutWarnings) {
  Answer a = Enforce(Decide(Review("img").dump(), Failing(), Mode::kValidate), Enforcement::kAudit);
  Json j = Json::parse(a.body);
  EXPECT_EQ(j["response"]["allowed"], true);
  EXPECT_FALSE(j["response"].contains("warnings"));
  EXPECT_FALSE(a.allowed);
  EXPECT_FALSE(a.enforced);
}

TEST(Modes, MalformedIsDeniedInEveryMode) {
  for (auto e : {Enforcement::kWarn, Enforcement::kAudit}) {
    Answer a = Enforce(Decide("{not json", Failing(), Mode::kValidate), e);
    EXPECT_EQ(a.http_status, 400);
    EXPECT_EQ(Json::parse(a.body)["response"]["allowed"], false);
    Json cm = Review("img");
    cm["request"]["kind"]["kind"] = "ConfigMap";
    Answer b = Enforce(Decide(cm.dump(), Failing(), Mode::kValidate), e);
    EXPECT_EQ(Json::parse(b.body)["response"]["allowed"], false);
    EXPECT_EQ(b.reason, Reason::kMalformed);
  }
}

TEST(Modes, Parse) {
  EXPECT_EQ(*ParseEnforcement("warn"), Enforcement::kWarn);
  EXPECT_EQ(ParseEnforcement("block").error().message, "--mode 'block': want enforce, warn or audit");
}

TEST(Reasons, ClassesFromWhatDecideSaw) {
  auto reason = [](const std::string& image, const CheckStarter& s) {
    return ReasonName(Decide(Review(image).dump(), s, Mode::kValidate).reason);
  };
  EXPECT_EQ(reason("img", Failing()), "policy");
  EXPECT_EQ(reason("down", Failing()), "registry");
  EXPECT_EQ(reason("busy", Failing()), "capacity");
  CheckStarter never = [](const std::string&, bool) -> PendingCheck {
    return [](std::chrono::steady_clock::time_point) { return std::nullopt; };
  };
  ReviewLimits quick;
  quick.deadline = std::chrono::milliseconds(1);
  EXPECT_EQ(ReasonName(Decide(Review("img").dump(), never, Mode::kValidate, quick).reason), "deadline");
  CheckStarter error = AnswerAtOnce([](const std::string&, bool) -> Result<policy::ImageDecision> {
    return MakeError(ErrorKind::kTransport, "down");
  });
  EXPECT_EQ(reason("img", error), "registry");
  ReviewLimits one;
  one.max_images = 0;
  EXPECT_EQ(ReasonName(Decide(Review("img").dump(), Failing(), Mode::kValidate, one).reason), "too_many_images");
  EXPECT_EQ(ReasonName(Decide("[]", Failing(), Mode::kValidate).reason), "malformed");
}

TEST(Observe, ReviewLogLineAndCounters) {
  Answer a = Enforce(Decide(Review("img").dump(), Failing(), Mode::kValidate), Enforcement::kAudit);
  Json line = Json::parse(ReviewLogLine(a, "gpu", Enforcement::kAudit, 12.3456));
  EXPECT_EQ(line, Json::parse(R"J({"event":"review","uid":"u-1","namespace":"ns","name":"x","kind":"Pod",
    "policy_set":"gpu","mode":"audit","images":["img"],"verdict":"denied","enforced":false,"reason":"policy",
    "violations":["containers[0] (app) image img: nonRoot: config User '0:0' is uid 0 (root)"],
    "http_status":200,"duration_ms":12.345})J"));
  MetricRegistry m;
  DeclareWebhookMetrics(m);
  CountReview(m, a, "", Enforcement::kAudit, 0.002);
  EXPECT_EQ(m.Value("imgtool_admission_reviews_total",
                    {{"policy_set", "default"}, {"mode", "audit"}, {"verdict", "denied"}, {"reason", "policy"}}),
            1);
  EXPECT_NE(m.Render().find("imgtool_admission_review_duration_seconds_count{policy_set=\"default\"} 1\n"),
            std::string::npos);
}

// A policy file in a fresh folder, written by rename (atomic) or in place.
struct PolicyDir {
  std::string dir, path;
  PolicyDir() {
    char tmpl[] = "/tmp/imgtool-ops-test-XXXXXX";
    dir = mkdtemp(tmpl);
    path = dir + "/policy.json";
  }
  ~PolicyDir() {
    unlink(path.c_str());
    rmdir(dir.c_str());
  }
  void Write(const std::string& text, bool atomic = true) const {
    std::string tmp = atomic ? path + ".new" : path;
    std::ofstream(tmp, std::ios::trunc) << text;
    if (atomic) rename(tmp.c_str(), path.c_str());
  }
};

const char* kNonRoot = R"({"policyVersion": 1, "rules": {"nonRoot": {}}})";
const char* kStricter = R"({"policyVersion": 1, "rules": {"nonRoot": {}, "digestPinned": {}}})";

TEST(PolicySetsTest, ASwapLeavesAReviewItsPolicy) {
  PolicyDir d;
  d.Write(kNonRoot);
  PolicySets sets;
  ASSERT_TRUE(sets.Add("", d.path).ok());
  auto in_flight = sets.Get("");  // a review's snapshot
  EXPECT_TRUE(sets.ReloadChanged().empty());
  d.Write(kStricter);
  auto r = sets.ReloadChanged();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].status.ok());
  EXPECT_EQ(in_flight->policy.RuleNames(), std::vector<std::string>{"nonRoot"});
  EXPECT_EQ(sets.Get("")->policy.RuleNames(), (std::vector<std::string>{"nonRoot", "digestPinned"}));
  EXPECT_NE(sets.Get("")->generation, in_flight->generation);
  EXPECT_EQ(sets.Get("nope"), nullptr);
}

TEST(PolicySetsTest, ABrokenFileKeepsTheOldPolicy) {
  PolicyDir d;
  d.Write(kNonRoot);
  PolicySets sets;
  ASSERT_TRUE(sets.Add("gpu", d.path).ok());
  auto before = sets.Get("gpu");
  d.Write(R"({"policyVersion": 1, "rules": {"nonRoot": {}, "maxSize": {"bytes": "x"}}})", false);
  auto r = sets.ReloadChanged();
  ASSERT_EQ(r.size(), 1u);
  ASSERT_FALSE(r[0].status.ok());
  EXPECT_NE(r[0].status.error().message.find(d.path), std::string::npos) << r[0].status.error().message;
  EXPECT_EQ(sets.Get("gpu"), before);
  EXPECT_EQ(r[0].now, before);
  EXPECT_TRUE(sets.ReloadChanged().empty());  // the same broken bytes: said once
  d.Write(R"({"policyVersion": 1, "rules": {}})");
  r = sets.ReloadChanged();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status.error().message, d.path + ": $.rules: no image rules (nothing to check)");
  EXPECT_EQ(sets.Get("gpu"), before);
}

TEST(PolicySetsTest, AMissingFileIsSaidOnceAndTheOldPolicyStays) {
  PolicyDir d;
  d.Write(kNonRoot);
  PolicySets sets;
  ASSERT_TRUE(sets.Add("", d.path).ok());
  auto before = sets.Get("");
  unlink(d.path.c_str());
  auto r = sets.ReloadChanged();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].status.ok());
  EXPECT_TRUE(sets.ReloadChanged().empty());
  EXPECT_EQ(sets.Get(""), before);
  d.Write(kStricter);
  r = sets.ReloadChanged();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].status.ok());
}

TEST(PolicySetsTest, TheSameBytesRewrittenAreNoReload) {
  PolicyDir d;
  d.Write(kNonRoot);
  PolicySets sets;
  ASSERT_TRUE(sets.Add("", d.path).ok());
  auto before = sets.Get("");
  d.Write(kNonRoot);  // a new inode, the same bytes
  EXPECT_TRUE(sets.ReloadChanged().empty());
  EXPECT_EQ(sets.Get(""), before);
}

TEST(PolicySetsTest, NamesAndBrokenFirstLoad) {
  PolicyDir d;
  d.Write(kNonRoot);
  PolicySets sets;
  EXPECT_EQ(sets.Add("GPU", d.path).error().message,
            "policy set 'GPU': want 1-63 of a-z, 0-9 and '-', not starting with '-'");
  EXPECT_FALSE(sets.Add("x", d.dir + "/missing.json").ok());
  EXPECT_TRUE(sets.Add("x", d.path).ok());
  EXPECT_EQ(sets.Add("x", d.path).error().message, "policy set 'x' is named twice");
}

}  // namespace
}  // namespace imgtool::admission
