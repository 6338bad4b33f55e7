// imgtool admission serve: the Kubernetes admission webhook. AdmissionReview (HTTPS POST)
// -> every image of the pod spec -> tag resolved to a digest (registry) -> facts (cached by
// digest) -> the policy evaluator -> allowed, or denied with every violation. The logic
// lives in imgtool/admission; this file maps flags onto it.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <optional>

#include "admission/checker.h"
#include "admission/metrics.h"
#include "admission/observe.h"
#include "admission/policy_sets.h"
#include "admission/poller.h"
#include "admission/server.h"
#include "admission/tls_reload.h"
#include "cli/output.h"
#include "cli/remote_flags.h"
#include "policy/policy.h"

namespace imgtool::cli {

namespace {

struct ServeFlags {
  std::string policy;
  std::vector<std::string> policy_sets;  // NAME=FILE
  std::string mode = "enforce";
  double reload_interval = 1;
  std::string tls_cert;
  std::string tls_key;
  std::string listen = ":8443";
  bool mutate = false;
  size_t threads = 64;
  size_t max_connections = 512;
  size_t max_body = 3 << 20;
  int read_timeout = 5;
  double decision_ttl = 300;
  double tag_ttl = 30;
  double review_deadline = 9;
  size_t max_images = 256;
  size_t max_registry_checks = 128;
  int registry_timeout = 10;
  int registry_attempts = 2;
  bool quiet = false;
  RemoteFlags remote;
};

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// The default set from --policy, a named set per --policy-set NAME=FILE.
Status LoadPolicySets(const ServeFlags& f, admission::PolicySets& sets, std::vector<std::string>& names) {
  if (auto st = sets.Add("", f.policy); !st.ok()) return st;
  for (const std::string& spec : f.policy_sets) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq + 1 == spec.size()) {
      return MakeError(ErrorKind::kInvalidInput, "--policy-set '" + spec + "': want NAME=FILE");
    }
    std::string name = spec.substr(0, eq);
    if (name == admission::kDefaultSetLabel) {
      return MakeError(ErrorKind::kInvalidInput, "--policy-set: '" + name + "' names --policy's set in the metrics");
    }
    if (auto st = sets.Add(name, spec.substr(eq + 1)); !st.ok()) return st;
    names.push_back(name);
  }
  return Status::Ok();
}

// One poll: changed policy files and TLS pair re-read, each reload logged and counted.
void ReloadChanged(admission::PolicySets& sets, admission::CertificateStore& certs, admission::MetricRegistry& m,
                   const std::function<void(const std::string&)>& log) {
  for (const auto& r : sets.ReloadChanged()) {
    admission::CountPolicyReload(m, r.name, r.status.ok());
    log(admission::ReloadLogLine("policy_reload", r.name, r.path, r.status, "sha256", r.now ? r.now->sha256 : ""));
  }
  auto changed = certs.ReloadChanged();
  if (changed.ok() && !*changed) return;
  admission::CountCertificateReload(m, changed.ok());
  Status st = changed.ok() ? Status::Ok() : Status(changed.error());
  log(admission::ReloadLogLine("certificate_reload", "", "", st, "serial", certs.Serial()));
}

admission::ServerOptions ServerOptionsOf(const ServeFlags& f) {
  admission::ServerOptions so;
  so.tls_cert = f.tls_cert;
  so.tls_key = f.tls_key;
  so.mutate = f.mutate;
  so.threads = f.threads;
  so.max_connections = f.max_connections;
  so.max_body_bytes = f.max_body;
  so.read_timeout_s = f.read_timeout;
  so.write_timeout_s = f.read_timeout;
  if (!f.quiet) {
    // One JSON object a line, on stderr: reviews, reloads, the server's own events.
    static std::mutex mu;
    so.log = [](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu);
      std::cerr << line << '\n' << std::flush;
    };
  }
  return so;
}

remote::RegistryOptions WebhookRegistryOptions(const ServeFlags& f) {
  auto reg = ToRegistryOptions(f.remote);
  // A webhook answers within the API server's timeout: few, short retries.
  reg.max_attempts = f.registry_attempts;
  reg.backoff_seconds = 0.2;
  // A registry that does not answer holds a check slot this long (per request), not curl's
  // minutes, whatever the environment says: the review has long been denied by then.
  reg.timeouts = remote::NetTimeouts{f.registry_timeout, f.registry_timeout, f.registry_timeout};
  return reg;
}

// Leaves without exit()'s cleanup while registry checks still run: it would free
// OpenSSL's state under their TLS connections and turn a clean stop into a SIGSEGV.
int Leave(int code, admission::RegistryImageChecker& checker) {
  if (!checker.WaitForRegistryWork(std::chrono::seconds(2))) {
    std::cerr << "imgtool admission: " << checker.RegistryWorkRunning()
              << " registry check(s) still running at exit; not waiting for them" << std::endl;
    std::quick_exit(code);
  }
  return code;
}

int RunServe(const ServeFlags& f) {
  auto enforcement = admission::ParseEnforcement(f.mode);
  if (!enforcement.ok()) return Fail(enforcement.error());
  admission::PolicySets sets;
  admission::ServerOptions so = ServerOptionsOf(f);
  if (auto st = LoadPolicySets(f, sets, so.policy_sets); !st.ok()) return Fail(st.error());
  if (auto st = admission::ParseListen(f.listen, so); !st.ok()) return Fail(st.error());
  admission::CertificateStore certs(f.tls_cert, f.tls_key);
  if (auto st = certs.Load(); !st.ok()) return Fail(st.error());
  so.certificates = &certs;
  // Lines as they are (JSON); the server's own messages wrapped as {"event":"server",...}.
  const std::function<void(const std::string&)> log = [sink = so.log](const std::string& line) {
    if (sink) sink(line);
  };
  so.log = [log](const std::string& message) { log(admission::ServerLogLine(message)); };

  admission::CheckerOptions co;
  co.decision_ttl = Millis(f.decision_ttl);
  co.tag_ttl = Millis(f.tag_ttl);
  co.max_registry_work = f.max_registry_checks;
  admission::RegistryImageChecker checker(sets.Get("")->policy, WebhookRegistryOptions(f), co);
  admission::MetricRegistry metrics;
  admission::DeclareWebhookMetrics(metrics);
  std::atomic<int64_t> in_flight{0};
  metrics.OnScrape([&checker, &in_flight](admission::MetricRegistry& m) {
    admission::SetCheckerGauges(m, checker.Stats(), in_flight.load());
  });
  so.metrics = [&metrics] { return metrics.Render(); };
  admission::ReviewLimits limits;
  limits.deadline = Millis(f.review_deadline);
  limits.max_images = f.max_images;
  admission::Enforcement mode = *enforcement;
  auto handler = [&](const std::string& body, admission::Mode m, const std::string& set) {
    ++in_flight;
    auto t0 = std::chrono::steady_clock::now();
    // The policy this review runs under to its end, whatever a reload swaps in meanwhile.
    auto start = checker.AsStarter(sets.Get(set));
    admission::Answer a = admission::Enforce(admission::Decide(body, start, m, limits), mode);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    admission::CountReview(metrics, a, set, mode, s);
    log(admission::ReviewLogLine(a, set, mode, s * 1000));
    --in_flight;
    return a;
  };
  // Started once the server blocks SIGTERM (on_listening), so the signal never lands on it.
  std::optional<admission::Poller> poller;
  auto st = admission::Serve(so, handler, [&] {
    std::cerr << "imgtool admission: listening on https://" << so.host << ":" << so.port << " (/validate"
              << (so.mutate ? ", /mutate" : "") << (so.policy_sets.empty() ? "" : ", /validate/<set>")
              << ", /healthz, /metrics; mode " << f.mode << ")" << std::endl;
    if (f.reload_interval > 0) {
      poller.emplace(Millis(f.reload_interval), [&] { ReloadChanged(sets, certs, metrics, log); });
    }
  });
  poller.reset();
  return Leave(st.ok() ? 0 : Fail(st.error()), checker);
}

}  // namespace

void AddAdmissionCommands(CLI::App& app, Action& run) {
  CLI::App* adm = app.add_subcommand("admission", "Kubernetes admission webhook for a policy (policies/*.json).");
  adm->require_subcommand(1);
  auto f = std::make_shared<ServeFlags>();
  CLI::App* serve = adm->add_subcommand(
      "serve",
      "Serve AdmissionReview v1 over HTTPS: POST /validate (and /mutate with --mutate), POST\n"
      "/validate/SET for each --policy-set, GET /healthz, GET /metrics (Prometheus text format).\n"
      "Pod spec (Pod, Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob) -> each container image\n"
      "-> tag resolved to a digest -> the policy's rules -> allowed, or denied listing every violation.\n"
      "Fails closed: malformed requests, unreachable registries and internal errors deny.\n"
      "--mutate rewrites tags to @sha256 digests (JSONPatch) and judges the pinned reference.\n\n"
      "Bounds: the images of a review are checked together and the review is answered within\n"
      "--review-deadline (an image with no answer by then is denied: \"no answer from the registry\n"
      "within 9 s\"); more than --max-images images deny the review; at most --max-registry-checks\n"
      "registry checks run at once, half of them per registry (beyond, an image waits for a slot\n"
      "until the deadline). Each connection gets a thread of its own up to --max-connections (more\n"
      "are closed at once); a client must finish its TLS handshake and whole request within\n"
      "--read-timeout, else it is cut, so slow clients cannot hold the threads reviews and /healthz\n"
      "need.\n\n"
      "Operating: --mode warn|audit lets denials through (warnings, or the log only) while a policy\n"
      "is rolled out. One JSON line per review on stderr (uid, images, verdict, reason, duration),\n"
      "and per reload. Policy files and the TLS pair are re-read when they change on disk (atomic\n"
      "swap; reviews in flight finish under the policy they began with; a broken file keeps the\n"
      "old one, logged and counted in imgtool_admission_policy_reloads_total{result=\"error\"}).\n\n"
      "Example:\n  imgtool admission serve --policy policies/golden.json --tls-cert tls.crt --tls-key tls.key \\\n"
      "    --listen :8443 --authfile /run/secrets/auth.json --policy-set gpu=/etc/imgtool/gpu.json --mode warn");
  serve->add_option("--policy", f->policy, "Policy file (JSON, see policies/README.md): the default set, /validate")
      ->required();
  serve->add_option("--policy-set", f->policy_sets,
                    "NAME=FILE: a named policy set, served at /validate/NAME (and /mutate/NAME); the webhook "
                    "configuration picks it by namespace label (examples/k8s). Repeatable");
  serve
      ->add_option("--mode", f->mode,
                   "enforce: deny what the policy denies. warn: allow it, with AdmissionReview warnings naming "
                   "each violation. audit: allow it; the log line and metrics keep the verdict. Malformed "
                   "requests are denied in every mode")
      ->default_str("enforce")
      ->check(CLI::IsMember({"enforce", "warn", "audit"}));
  serve
      ->add_option("--reload-interval", f->reload_interval,
                   "Seconds between looks at the policy files and the TLS pair; a changed file is re-read and "
                   "swapped in for new reviews and handshakes (a broken one keeps the old). 0: never")
      ->default_str("1")
      ->check(CLI::Range(0.0, 3600.0));
  serve->add_option("--tls-cert", f->tls_cert, "Server certificate (PEM)")->required();
  serve->add_option("--tls-key", f->tls_key, "Server private key (PEM)")->required();
  serve->add_option("--listen", f->listen, "HOST:PORT, [V6]:PORT or :PORT")->default_str(":8443");
  serve->add_flag("--mutate", f->mutate, "Also serve /mutate: pin tags to digests (JSONPatch)");
  serve
      ->add_option("--threads", f->threads,
                   "Threads started at once and kept (a kept-alive connection holds one; more connections "
                   "get threads of their own, up to --max-connections)")
      ->default_str("64")
      ->check(CLI::Range(1, 1024));
  serve
      ->add_option("--max-connections", f->max_connections,
                   "Connections served at once, a thread each; more are closed at their first TLS step")
      ->default_str("512")
      ->check(CLI::Range(1, 65536));
  serve->add_option("--max-body", f->max_body, "Largest request body in bytes")->default_str("3145728");
  serve
      ->add_option("--read-timeout", f->read_timeout,
                   "Seconds for a client's TLS handshake and whole request, in all (and to write an answer); "
                   "slower clients are cut")
      ->default_str("5")
      ->check(CLI::Range(1, 300));
  serve->add_option("--decision-ttl", f->decision_ttl, "Seconds a digest's facts stay cached")->default_str("300");
  serve->add_option("--tag-ttl", f->tag_ttl, "Seconds a tag -> digest resolution stays cached")->default_str("30");
  serve
      ->add_option("--review-deadline,--deadline", f->review_deadline,
                   "Seconds to answer a review in (its images checked together); an image with no answer by "
                   "then is denied. Keep it under the webhook's timeoutSeconds (10 in examples/k8s)")
      ->default_str("9")
      ->check(CLI::Range(0.1, 30.0));
  serve->add_option("--max-images", f->max_images, "Images one review may name; more deny the review")
      ->default_str("256")
      ->check(CLI::Range(1, 100000));
  serve
      ->add_option("--max-registry-checks", f->max_registry_checks,
                   "Registry checks (tag resolutions, image facts) running at once, half of them per registry "
                   "host; beyond, an image waits for a slot until the review's deadline")
      ->default_str("128")
      ->check(CLI::Range(1, 4096));
  serve
      ->add_option("--registry-timeout", f->registry_timeout,
                   "Seconds a registry may take to connect (TCP and TLS) or stay silent before the check "
                   "fails")
      ->default_str("10")
      ->check(CLI::Range(1, 300));
  serve->add_option("--registry-attempts", f->registry_attempts, "Tries per registry request")
      ->default_str("2")
      ->check(CLI::Range(1, 10));
  serve->add_flag("-q,--quiet", f->quiet, "No log lines on stderr");
  AddRemoteFlags(serve, f->remote);
  serve->callback([f, &run] { run = [f] { return RunServe(*f); }; });
}

}  // namespace imgtool::cli
