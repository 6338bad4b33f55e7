// imgtool policy check --policy P REF... : open each image -> gather the facts the
// policy's rules need -> evaluate (pure) -> a table (or --json). An index is one
// reference: signedBy, attestations and digestPinned judge it, every other rule each of
// its images.
// Exit 0 when every rule passes for every reference, 5 when any fails, 2 for a bad policy.
// imgtool lint Dockerfile [--policy P] : parse -> lint -> file:line findings; exit 0
// clean, 5 findings, 2 unreadable or unparsable input.
#include <iomanip>
#include <iostream>

#include "cli/output.h"
#include "cli/remote_flags.h"
#include "fs/atomic_file.h"
#include "policy/evaluate.h"
#include "policy/gather.h"
#include "policy/lint.h"
#include "policy/signature_verifier.h"

namespace imgtool::cli {

namespace {

constexpr int kExitDenied = 5;
constexpr int kExitInvalid = 2;

struct CheckFlags {
  std::string policy;
  std::vector<std::string> refs;
  bool json = false;
  RemoteFlags remote;
};

// Any reference, also the pinned oci:DIR@sha256:...; layers stream from where they are.
Result<oci::Node> Open(const std::string& ref, const RemoteFlags& remote) {
  auto opened = transport::Open(ref, ToRegistryOptions(remote));
  if (!opened.ok()) return opened.error();
  return opened->node;
}

void PrintTable(const std::vector<policy::ImageDecision>& ds) {
  size_t wi = 5, wr = 4;
  for (const auto& d : ds) {
    wi = std::max(wi, d.reference.size());
    for (const auto& r : d.rules) wr = std::max(wr, r.rule.size());
  }
  std::cout << std::left << std::setw(static_cast<int>(wi)) << "IMAGE"
            << "  " << std::setw(static_cast<int>(wr)) << "RULE"
            << "  RESULT  REASON\n";
  int failed = 0, total = 0;
  for (const auto& d : ds) {
    for (const auto& r : d.rules) {
      ++total;
      failed += r.pass ? 0 : 1;
      std::cout << std::setw(static_cast<int>(wi)) << d.reference << "  " << std::setw(static_cast<int>(wr)) << r.rule
                << "  " << (r.pass ? "pass  " : "FAIL  ") << "  " << r.reason << "\n";
    }
  }
  // Index entries no runtime runs: said, so nobody reads the table as covering them.
  for (const auto& d : ds) {
    for (const auto& s : d.skipped) std::cout << d.reference << ": skipped " << s << "\n";
  }
  std::cout << ds.size() << " image(s), " << total << " rule check(s), " << failed
            << " failed: " << (failed == 0 && total > 0 ? "OK" : "FAILED") << "\n";
}

int RunCheck(const CheckFlags& f) {
  auto pol = policy::LoadPolicy(f.policy);
  if (!pol.ok()) {
    Fail(pol.error());
    return kExitInvalid;
  }
  if (pol->RuleNames().empty()) {
    Fail(MakeError(ErrorKind::kInvalidInput, f.policy + ": $.rules: no image rules (nothing to check)"));
    return kExitInvalid;
  }
  std::vector<policy::ImageDecision> decisions;
  bool all = true;
  for (const auto& ref : f.refs) {
    auto opts = ToRegistryOptions(f.remote);
    auto facts = policy::GatherFacts(ref, Open(ref, f.remote), *pol, policy::RegistrySignatureVerifier(opts),
                                     policy::RegistryAttestationVerifier(opts));
    decisions.push_back(policy::Evaluate(*pol, facts));
    all = all && decisions.back().pass;
  }
  if (f.json) {
    oci::Json images = oci::Json::array();
    for (const auto& d : decisions) {
      oci::Json rules = oci::Json::array();
      for (const auto& r : d.rules) rules.push_back({{"rule", r.rule}, {"pass", r.pass}, {"reason", r.reason}});
      oci::Json image = {{"reference", d.reference}, {"digest", d.digest}, {"pass", d.pass}, {"rules", rules}};
      if (!d.skipped.empty()) image["skipped"] = d.skipped;
      images.push_back(image);
    }
    PrintJson({{"policy", f.policy}, {"pass", all}, {"images", images}});
  } else {
    PrintTable(decisions);
  }
  return all ? 0 : kExitDenied;
}

struct LintFlags {
  std::string dockerfile;
  std::string policy;
  std::vector<std::string> build_args;
  bool json = false;
};

int RunLint(const LintFlags& f) {
  policy::LintOptions o;
  if (!f.policy.empty()) {
    auto pol = policy::LoadPolicy(f.policy);
    if (!pol.ok()) {
      Fail(pol.error());
      return kExitInvalid;
    }
    o.rules = pol->dockerfile;
  }
  for (const auto& a : f.build_args) {
    auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
      Fail(MakeError(ErrorKind::kInvalidInput, "--build-arg '" + a + "': want NAME=VALUE"));
      return kExitInvalid;
    }
    o.build_args[a.substr(0, eq)] = a.substr(eq + 1);
  }
  auto text = fs::ReadSmallFile(f.dockerfile, 4 << 20);
  if (!text.ok()) {
    Fail(text.error().Context(f.dockerfile));
    return kExitInvalid;
  }
  auto df = policy::ParseDockerfile(*text, f.dockerfile);
  if (!df.ok()) {
    Fail(df.error());
    return kExitInvalid;
  }
  auto findings = policy::LintDockerfile(*df, o);
  if (f.json) {
    oci::Json out = oci::Json::array();
    for (const auto& x : findings) {
      out.push_back({{"file", f.dockerfile}, {"line", x.line}, {"rule", x.rule}, {"message", x.message}});
    }
    PrintJson({{"file", f.dockerfile}, {"pass", findings.empty()}, {"findings", out}});
  } else {
    for (const auto& x : findings)
      std::cout << f.dockerfile << ":" << x.line << ": " << x.rule << ": " << x.message << "\n";
    std::cout << f.dockerfile << ": " << findings.size() << " finding(s): " << (findings.empty() ? "OK" : "FAILED")
              << "\n";
  }
  return findings.empty() ? 0 : kExitDenied;
}

}  // namespace

void AddPolicyCommands(CLI::App& app, Action& run) {
  CLI::App* pol = app.add_subcommand("policy", "Check images against a policy (policies/*.json).");
  pol->require_subcommand(1);
  auto c = std::make_shared<CheckFlags>();
  CLI::App* check =
      pol->add_subcommand("check",
                          "Evaluate every rule of a policy on each image: open -> gather facts -> decide.\n"
                          "Prints IMAGE / RULE / RESULT / REASON. Exit 0 when all pass, 5 when any rule fails\n"
                          "(an image that cannot be read fails its rules), 2 for a bad policy.\n"
                          "attestations: each requirement needs an in-toto attestation of its predicateType,\n"
                          "signed as its signedBy says and naming the image, whose predicate meets every\n"
                          "condition (policies/rules/attestations.md); a failure names the requirement.\n"
                          "An index gets one row per rule: signedBy, attestations and digestPinned judge the\n"
                          "index itself, every other rule each platform's image (a failure names the platform\n"
                          "and digest);\n"
                          "artifact entries (unknown/unknown attestations) are skipped and listed.\n\n"
                          "Examples:\n  imgtool policy check --policy policies/golden.json oci:out/golden@sha256:...\n"
                          "  imgtool policy check --policy policies/golden.json oci:out/multi:v1   # an index");
  check->add_option("--policy", c->policy, "Policy file (JSON, see policies/README.md)")->required();
  check
      ->add_option("refs", c->refs,
                   "oci:DIR[:TAG|@DIGEST], oci-archive:FILE[:TAG|@DIGEST], docker://HOST/REPO[:TAG|@DIGEST]")
      ->required();
  check->add_flag("--json", c->json, "Print a JSON object");
  AddRemoteFlags(check, c->remote);
  check->callback([c, &run] { run = [c] { return RunCheck(*c); }; });

  auto l = std::make_shared<LintFlags>();
  CLI::App* lint =
      app.add_subcommand("lint",
                         "Lint a Dockerfile: FROM pinned by digest, never latest, a numeric non-root final USER,\n"
                         "ADD of a URL with --checksum. Checks are on unless the policy's \"dockerfile\" section\n"
                         "turns one off. Exit 0 clean, 5 findings, 2 unreadable input or bad policy.\n\n"
                         "Example:\n  imgtool lint dockerfiles/golden.Dockerfile --policy policies/golden.json");
  lint->add_option("dockerfile", l->dockerfile, "The Dockerfile")->required();
  lint->add_option("--policy", l->policy, "Policy file whose \"dockerfile\" section configures the checks");
  lint->add_option("--build-arg", l->build_args, "NAME=VALUE over an ARG default (for FROM substitution)");
  lint->add_flag("--json", l->json, "Print a JSON object");
  lint->callback([l, &run] { run = [l] { return RunLint(*l); }; });
}

}  // namespace imgtool::cli
