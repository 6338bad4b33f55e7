// What an operator sees of the webhook: the metrics it keeps (declared here, so their
// names and labels live in one place; imgtool/admission/README.md lists them) and the
// JSON log lines, one per review and one per reload. Pure given the registry: the server
// calls these, tests read the text back.
//
// Never logged: the review body (it may carry a pod's environment, secrets among it).
#pragma once

#include <string>

#include "admission/checker.h"
#include "admission/decide.h"
#include "admission/metrics.h"
#include "oci/result.h"

namespace imgtool::admission {

// The policy_set label of the default set (/validate); a named set may not be called so.
inline constexpr const char* kDefaultSetLabel = "default";

void DeclareWebhookMetrics(MetricRegistry& m);

// reviews_total{policy_set,mode,verdict,reason} + 1 and the duration histogram. `verdict`
// is the policy's (allowed / denied), also in warn and audit modes where the answer
// allowed it: mode tells the two apart.
void CountReview(MetricRegistry& m, const Answer& a, const std::string& policy_set, Enforcement mode, double seconds);
// The checker's caches and registry errors, and reviews in flight, as read at a scrape.
void SetCheckerGauges(MetricRegistry& m, const CheckerStats& st, int64_t in_flight);
// policy_reloads_total{policy_set,result} + 1, policy_last_reload_success{policy_set}.
void CountPolicyReload(MetricRegistry& m, const std::string& policy_set, bool ok);
void CountCertificateReload(MetricRegistry& m, bool ok);

// {"event":"review","uid":...,"namespace":...,"name":...,"kind":...,"policy_set":...,
//  "mode":...,"images":[...],"verdict":"allowed|denied","enforced":bool,"reason":...,
//  "violations":[...],"duration_ms":...}
std::string ReviewLogLine(const Answer& a, const std::string& policy_set, Enforcement mode, double ms);
// {"event":"policy_reload"|"certificate_reload","policy_set":...,"path":...,
//  "result":"ok"|"error",("error":...)|("sha256"/"serial":...)}
std::string ReloadLogLine(const std::string& event, const std::string& policy_set, const std::string& path,
                          const Status& status, const std::string& detail_key, const std::string& detail);
// Any other server message as {"event":"server","message":...}.
std::string ServerLogLine(const std::string& message);

}  // namespace imgtool::admission
