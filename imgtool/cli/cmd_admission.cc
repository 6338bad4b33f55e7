// imgtool admission serve: the Kubernetes admission webhook. AdmissionReview (HTTPS POST)
// -> every image of the pod spec -> tag resolved to a digest (registry) -> facts (cached by
// digest) -> the policy evaluator -> allowed, or denied with every violation. The logic
// lives in imgtool/admission; this file maps flags onto it.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>

#include "admission/checker.h"
#include "admission/server.h"
#include "cli/output.h"
#include "cli/remote_flags.h"
#include "policy/policy.h"

namespace imgtool::cli {

namespace {

struct ServeFlags {
  std::string policy;
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

int RunServe(const ServeFlags& f) {
  auto pol = policy::LoadPolicy(f.policy);
  if (!pol.ok()) return Fail(pol.error());
  if (pol->RuleNames().empty()) {
    return Fail(MakeError(ErrorKind::kInvalidInput, f.policy + ": $.rules: no image rules (nothing to check)"));
  }
  admission::ServerOptions so;
  if (auto st = admission::ParseListen(f.listen, so); !st.ok()) return Fail(st.error());
  so.tls_cert = f.tls_cert;
  so.tls_key = f.tls_key;
  so.mutate = f.mutate;
  so.threads = f.threads;
  so.max_connections = f.max_connections;
  so.max_body_bytes = f.max_body;
  so.read_timeout_s = f.read_timeout;
  so.write_timeout_s = f.read_timeout;
  if (!f.quiet) {
    static std::mutex mu;
    so.log = [](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu);
      PrintLine("admission: ", line);
    };
  }
  auto reg = ToRegistryOptions(f.remote);
  // A webhook answers within the API server's timeout: few, short retries.
  reg.max_attempts = f.registry_attempts;
  reg.backoff_seconds = 0.2;
  // A registry that does not answer holds a check slot this long (per request), not curl's
  // minutes, whatever the environment says: the review has long been denied by then.
  reg.timeouts = remote::NetTimeouts{f.registry_timeout, f.registry_timeout, f.registry_timeout};
  admission::CheckerOptions co;
  co.decision_ttl = Millis(f.decision_ttl);
  co.tag_ttl = Millis(f.tag_ttl);
  co.max_registry_work = f.max_registry_checks;
  admission::RegistryImageChecker checker(*pol, reg, co);
  auto start = checker.AsStarter();
  admission::ReviewLimits limits;
  limits.deadline = Millis(f.review_deadline);
  limits.max_images = f.max_images;
  auto handler = [&start, &limits](const std::string& body, admission::Mode mode) {
    return admission::Decide(body, start, mode, limits);
  };
  auto st = admission::Serve(so, handler, [&so] {
    std::cerr << "imgtool admission: listening on https://" << so.host << ":" << so.port << " (/validate"
              << (so.mutate ? ", /mutate" : "") << ", /healthz)" << std::endl;
  });
  // Checks of a silent registry may still run (each ends within --registry-timeout). Give
  // them a moment; past it, leave without exit()'s cleanup, which would free OpenSSL's
  // state under their TLS connections and turn a clean stop into a SIGSEGV.
  int code = st.ok() ? 0 : Fail(st.error());
  if (!checker.WaitForRegistryWork(std::chrono::seconds(2))) {
    std::cerr << "imgtool admission: " << checker.RegistryWorkRunning()
              << " registry check(s) still running at exit; not waiting for them" << std::endl;
    std::quick_exit(code);
  }
  return code;
}

}  // namespace

void AddAdmissionCommands(CLI::App& app, Action& run) {
  CLI::App* adm = app.add_subcommand("admission", "Kubernetes admission webhook for a policy (policies/*.json).");
  adm->require_subcommand(1);
  auto f = std::make_shared<ServeFlags>();
  CLI::App* serve = adm->add_subcommand(
      "serve",
      "Serve AdmissionReview v1 over HTTPS: POST /validate (and /mutate with --mutate), GET /healthz.\n"
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
      "Example:\n  imgtool admission serve --policy policies/golden.json --tls-cert tls.crt --tls-key tls.key \\\n"
      "    --listen :8443 --authfile /run/secrets/auth.json");
  serve->add_option("--policy", f->policy, "Policy file (JSON, see policies/README.md)")->required();
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
