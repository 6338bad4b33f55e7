#include "admission/observe.h"

#include "oci/canonical_json.h"

namespace imgtool::admission {

namespace {

const char* kReviews = "imgtool_admission_reviews_total";
const char* kDuration = "imgtool_admission_review_duration_seconds";

// Outside text (registry errors) may hold bytes that are not UTF-8: replaced, not thrown on.
std::string Line(const oci::Json& j) { return j.dump(-1, ' ', false, oci::Json::error_handler_t::replace); }

}  // namespace

void DeclareWebhookMetrics(MetricRegistry& m) {
  m.DeclareCounter(kReviews,
                   "Reviews answered, by policy set, mode, the policy's verdict and the reason class of a denial");
  // 1 ms (a cached review) to 10 s (the API server's longest timeout).
  m.DeclareHistogram(kDuration, "Time from a review's body read to its answer written",
                     {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10});
  m.DeclareGauge("imgtool_admission_reviews_in_flight", "Reviews being decided now");
  m.DeclareCounter("imgtool_admission_cache_hits_total",
                   "Checks served by a cache entry (cached, or in flight and shared), by cache");
  m.DeclareCounter("imgtool_admission_cache_misses_total", "Checks that started registry work, by cache");
  m.DeclareGauge("imgtool_admission_cache_entries", "Entries held, by cache (tag: tag -> digest; facts: by digest)");
  m.DeclareCounter("imgtool_admission_registry_errors_total",
                   "Registry work that failed: a tag not resolved, an image (or an index's image) not opened");
  m.DeclareCounter("imgtool_admission_policy_reloads_total", "Policy files re-read after a change, by set and result");
  m.DeclareGauge("imgtool_admission_policy_last_reload_success",
                 "1 when the set's last reload swapped its policy in (or none was needed), 0 when it was refused");
  m.DeclareCounter("imgtool_admission_certificate_reloads_total",
                   "TLS certificate and key pairs re-read after a change, by result");
}

void CountReview(MetricRegistry& m, const Answer& a, const std::string& policy_set, Enforcement mode, double seconds) {
  std::string set = policy_set.empty() ? kDefaultSetLabel : policy_set;
  m.Add(kReviews, {{"policy_set", set},
                   {"mode", EnforcementName(mode)},
                   {"verdict", a.allowed ? "allowed" : "denied"},
                   {"reason", ReasonName(a.reason)}});
  m.Observe(kDuration, {{"policy_set", set}}, seconds);
}

void SetCheckerGauges(MetricRegistry& m, const CheckerStats& st, int64_t in_flight) {
  // Counters kept by the checker, copied at scrape time (they only grow).
  m.Set("imgtool_admission_cache_hits_total", {{"cache", "tag"}}, static_cast<double>(st.tag_hits));
  m.Set("imgtool_admission_cache_hits_total", {{"cache", "facts"}}, static_cast<double>(st.facts_hits));
  m.Set("imgtool_admission_cache_misses_total", {{"cache", "tag"}}, static_cast<double>(st.tag_misses));
  m.Set("imgtool_admission_cache_misses_total", {{"cache", "facts"}}, static_cast<double>(st.facts_misses));
  m.Set("imgtool_admission_cache_entries", {{"cache", "tag"}}, static_cast<double>(st.tag_entries));
  m.Set("imgtool_admission_cache_entries", {{"cache", "facts"}}, static_cast<double>(st.facts_entries));
  m.Set("imgtool_admission_registry_errors_total", {}, static_cast<double>(st.registry_errors));
  m.Set("imgtool_admission_reviews_in_flight", {}, static_cast<double>(in_flight));
}

void CountPolicyReload(MetricRegistry& m, const std::string& policy_set, bool ok) {
  std::string set = policy_set.empty() ? kDefaultSetLabel : policy_set;
  m.Add("imgtool_admission_policy_reloads_total", {{"policy_set", set}, {"result", ok ? "ok" : "error"}});
  m.Set("imgtool_admission_policy_last_reload_success", {{"policy_set", set}}, ok ? 1 : 0);
}

void CountCertificateReload(MetricRegistry& m, bool ok) {
  m.Add("imgtool_admission_certificate_reloads_total", {{"result", ok ? "ok" : "error"}});
}

std::string ReviewLogLine(const Answer& a, const std::string& policy_set, Enforcement mode, double ms) {
  auto slash = a.name.find('/');
  oci::Json j = {{"event", "review"},
                 {"uid", a.uid},
                 {"namespace", slash == std::string::npos ? "" : a.name.substr(0, slash)},
                 {"name", slash == std::string::npos ? a.name : a.name.substr(slash + 1)},
                 {"kind", a.kind},
                 {"policy_set", policy_set.empty() ? kDefaultSetLabel : policy_set},
                 {"mode", EnforcementName(mode)},
                 {"images", a.images},
                 {"verdict", a.allowed ? "allowed" : "denied"},
                 {"enforced", a.enforced},
                 {"reason", ReasonName(a.reason)},
                 {"violations", a.violations},
                 {"http_status", a.http_status},
                 {"duration_ms", static_cast<double>(static_cast<int64_t>(ms * 1000)) / 1000}};
  return Line(j);
}

std::string ReloadLogLine(const std::string& event, const std::string& policy_set, const std::string& path,
                          const Status& status, const std::string& detail_key, const std::string& detail) {
  oci::Json j = {{"event", event}};
  if (event == "policy_reload") j["policy_set"] = policy_set.empty() ? kDefaultSetLabel : policy_set;
  j["path"] = path;
  j["result"] = status.ok() ? "ok" : "error";
  if (!status.ok()) {
    j["error"] = status.error().message;
    j["kept"] = "the previous one stays in use";
  } else if (!detail_key.empty()) {
    j[detail_key] = detail;
  }
  return Line(j);
}

std::string ServerLogLine(const std::string& message) { return Line({{"event", "server"}, {"message", message}}); }

}  // namespace imgtool::admission
