// imgtool verify REF: check every blob's size and sha256, media types and diff_ids;
// with --key / --trusted-keys also that a trusted key signed this digest (and with
// --attestation, attested it); with --attestation --policy FILE, that the policy's
// attestations rule passes (the evaluation `policy check` and the webhook use).
#include <iostream>
#include <optional>

#include "builder/layer_cache.h"
#include "check/verify.h"
#include "cli/keyless_flags.h"
#include "cli/output.h"
#include "cli/remote_flags.h"
#include "policy/evaluate.h"
#include "policy/signature_verifier.h"
#include "sign/verify_signatures.h"
#include "sign_core/dsse.h"

namespace imgtool::cli {

namespace {

struct VerifyFlags {
  std::string ref;
  bool json = false;
  RemoteFlags remote;
  std::vector<std::string> keys;  // --key, repeatable
  std::string trusted_dir;        // --trusted-keys: every *.pub in it
  bool attestation = false;
  std::string predicate_type;  // --type for --attestation; empty: any
  bool full = false;           // --full: decompress every layer, whatever is known
  std::string platform;        // --platform: of an index, only this image
  KeylessFlags keyless;        // --certificate-identity ... (Sigstore keyless)
  std::string policy;          // --policy: with --attestation, its attestations rule decides
};

oci::Json VerdictJson(const sign::SignatureVerdict& v) {
  oci::Json results = oci::Json::array();
  for (const auto& c : v.signatures) {
    results.push_back({{"layer", c.layer.str()},
                       {"ok", c.ok},
                       {"key", c.key},
                       {"reason", c.reason},
                       {"dockerReference", c.docker_reference}});
  }
  return {{"verified", v.verified}, {"reason", v.reason}, {"keys", v.verified_keys}, {"results", results}};
}

void PrintVerdict(const char* what, const sign::SignatureVerdict& v) {
  for (const auto& c : v.signatures) {
    std::cout << what << " " << c.layer.str() << ": " << (c.ok ? "verified by " + c.key : "DENIED: " + c.reason)
              << "\n";
  }
}

// Signatures (and attestations) of the image the blob check verified, by its digest,
// so a tag that moves between the two checks cannot mix two images.
struct SignatureOutcome {
  std::optional<sign::SignatureVerdict> signatures, attestations;
  std::vector<policy::RuleResult> requirements;  // --policy: one per requirement of its attestations rule
  std::string denied;                            // first cause, empty when everything asked for verified
};
// Keyless: the verdict for signatures or attestations by the identity asked for.
Result<sign::SignatureVerdict> CheckKeyless(const VerifyFlags& f, const sigstore::IdentityPolicy& identity,
                                            const ref::Reference& pinned) {
  auto root = sigstore::LoadTrustedRoot(f.keyless.trusted_root);
  if (!root.ok()) return root.error().Context("--trusted-root");
  std::string type;
  if (f.attestation && !f.predicate_type.empty()) {
    auto t = sign::PredicateTypeFor(f.predicate_type);
    if (!t.ok()) return t.error();
    type = *t;
  }
  auto times = f.keyless.Times();
  if (!times.ok()) return times.error();
  sign::KeylessPolicy policy{identity, std::make_shared<const sigstore::TrustedRoot>(std::move(*root)), *times};
  return sign::VerifyImageKeyless(pinned, policy, f.attestation, type, ToRegistryOptions(f.remote));
}

// --policy: the policy's attestations rule, loaded (exit 2 when bad) before any blob is read.
Result<std::optional<policy::Policy>> AttestationPolicy(const VerifyFlags& f, bool keyless) {
  if (f.policy.empty()) return std::optional<policy::Policy>();
  if (!f.attestation) return MakeError(ErrorKind::kInvalidInput, "--policy needs --attestation");
  if (!f.keys.empty() || !f.trusted_dir.empty() || keyless || !f.predicate_type.empty()) {
    return MakeError(
        ErrorKind::kInvalidInput,
        "--policy says which types and signers to trust: give no --key, --trusted-keys, --type or --certificate-*");
  }
  auto pol = policy::LoadPolicy(f.policy);
  if (!pol.ok()) return pol.error();
  if (!pol->attestations)
    return MakeError(ErrorKind::kInvalidInput, f.policy + ": $.rules.attestations: none (nothing to verify)");
  return std::optional<policy::Policy>(std::move(*pol));
}

// Each requirement judged on the digest the blob check verified.
SignatureOutcome CheckPolicyAttestations(const VerifyFlags& f, const policy::Policy& pol, ref::Reference pinned,
                                         const oci::Digest& digest) {
  pinned.digest = digest.str();
  policy::ImageFacts facts;
  std::vector<policy::AttestationFacts> each;
  for (const auto& r : *pol.attestations)
    each.push_back(policy::VerifyAttestationRequirement(pinned, r, ToRegistryOptions(f.remote)));
  facts.attestations = std::move(each);
  SignatureOutcome out;
  out.requirements = policy::EvaluateAttestationRequirements(*pol.attestations, facts);
  for (const auto& r : out.requirements) {
    if (!r.pass) out.denied += (out.denied.empty() ? "attestation policy: " : "; ") + r.rule + ": " + r.reason;
  }
  return out;
}

Result<SignatureOutcome> CheckSignatures(const VerifyFlags& f, const std::optional<sigstore::IdentityPolicy>& identity,
                                         const ref::Reference& ref, const oci::Digest& digest) {
  SignatureOutcome out;
  if (identity) {
    if (!f.keys.empty() || !f.trusted_dir.empty()) {
      return MakeError(ErrorKind::kInvalidInput,
                       "--key/--trusted-keys and --certificate-* are two ways to verify: give one");
    }
    ref::Reference pinned = ref;
    pinned.digest = digest.str();
    auto v = CheckKeyless(f, *identity, pinned);
    if (!v.ok()) return v.error();
    (f.attestation ? out.attestations : out.signatures) = *v;
    if (!v->verified) out.denied = (f.attestation ? "attestation check: " : "signature check: ") + v->reason;
    return out;
  }
  std::vector<std::string> keys = f.keys;
  if (!f.trusted_dir.empty()) {
    auto in_dir = sign::PublicKeysIn(f.trusted_dir);
    if (!in_dir.ok()) return in_dir.error().Context("--trusted-keys");
    keys.insert(keys.end(), in_dir->begin(), in_dir->end());
  }
  if (keys.empty()) return out;
  ref::Reference pinned = ref;
  pinned.digest = digest.str();  // the manifest the blob check verified, wherever the tag points now
  auto opts = ToRegistryOptions(f.remote);
  // As cosign verify-attestation: --attestation checks the attestations alone.
  if (!f.attestation) {
    auto sigs = sign::VerifyImageSignatures(pinned, keys, opts);
    if (!sigs.ok()) return sigs.error();
    out.signatures = *sigs;
    if (!sigs->verified) out.denied = "signature check: " + sigs->reason;
  } else {
    std::string type;
    if (!f.predicate_type.empty()) {
      auto t = sign::PredicateTypeFor(f.predicate_type);
      if (!t.ok()) return t.error();
      type = *t;
    }
    auto atts = sign::VerifyImageAttestations(pinned, keys, type, opts);
    if (!atts.ok()) return atts.error();
    out.attestations = *atts;
    if (!atts->verified && out.denied.empty()) out.denied = "attestation check: " + atts->reason;
  }
  for (const auto* v : {&out.signatures, &out.attestations}) {
    if (*v && (*v)->image != digest && out.denied.empty()) {
      out.denied = "signatures were checked against " + (*v)->image.str() + ", not " + digest.str();
    }
  }
  return out;
}

oci::Json ManifestList(const check::VerifyReport& r) {
  oci::Json out = oci::Json::array();
  for (const auto& m : r.manifests) out.push_back(m.str());
  return out;
}

// What was read from the source: each unique blob once, however many descriptors name it.
oci::Json StatsJson(const check::VerifyReport& r) {
  return {{"reads", r.reads}, {"bytesRead", r.bytes_read}, {"descriptorsReused", r.verdicts_reused}};
}

int RunVerify(const VerifyFlags& f) {
  auto ref = ref::ParseReference(f.ref);
  if (!ref.ok()) return Fail(ref.error());
  auto platform = PlatformFlag(f.platform);
  if (!platform.ok()) return Fail(platform.error());
  // The identity regexps are compiled with the other flags: a bad one is exit 2 naming the
  // flag before any blob is read.
  std::optional<sigstore::IdentityPolicy> identity;
  if (f.keyless.any()) {
    auto policy = f.keyless.Policy();
    if (!policy.ok()) return Fail(policy.error());
    if (auto times = f.keyless.Times(); !times.ok()) return Fail(times.error());
    identity = std::move(*policy);
  }
  auto attestation_policy = AttestationPolicy(f, identity.has_value());
  if (!attestation_policy.ok()) return Fail(attestation_policy.error());
  auto repo = transport::OpenRepository(*ref, ToRegistryOptions(f.remote));
  if (!repo.ok()) return Fail(repo.error());
  auto top = (*repo)->Resolve(transport::NameIn(*ref));
  if (!top.ok()) return Fail(top.error().Context(f.ref));
  check::VerifyOptions vo;
  vo.known = archive::KnownDiffIds::In(build::LayerCache::DefaultDir());
  vo.decompress_all = f.full;
  vo.platform = *platform;
  auto report = check::Verify(*(*repo)->store(), *top, vo);
  if (!report.ok()) return Fail(report.error().Context(f.ref));
  if (f.attestation && f.keys.empty() && f.trusted_dir.empty() && !f.keyless.any() && !*attestation_policy) {
    return Fail(MakeError(ErrorKind::kInvalidInput,
                          "--attestation needs --key, --trusted-keys, --certificate-identity or --policy"));
  }
  auto sigs = *attestation_policy
                  ? Result<SignatureOutcome>(CheckPolicyAttestations(f, **attestation_policy, *ref, report->manifest))
                  : CheckSignatures(f, identity, *ref, report->manifest);
  if (!sigs.ok()) return Fail(sigs.error().Context(f.ref));
  if (f.json) {
    oci::Json problems = oci::Json::array();
    for (const auto& p : report->problems) problems.push_back({{"blob", p.blob}, {"problem", p.what}});
    oci::Json out = {{"reference", f.ref},
                     {"digest", report->manifest.str()},
                     {"mediaType", report->media_type},
                     {"manifests", ManifestList(*report)},
                     {"ok", report->ok() && sigs->denied.empty()},
                     {"blobsChecked", report->blobs_checked},
                     {"bytesChecked", report->bytes_checked},
                     {"layersDecompressed", report->layers_decompressed},
                     {"diffIdsKnown", report->diff_ids_known},
                     {"stats", StatsJson(*report)},
                     {"problems", problems}};
    if (sigs->signatures) out["signatures"] = VerdictJson(*sigs->signatures);
    if (sigs->attestations) out["attestations"] = VerdictJson(*sigs->attestations);
    if (*attestation_policy) {
      oci::Json rows = oci::Json::array();
      for (const auto& r : sigs->requirements)
        rows.push_back({{"requirement", r.rule}, {"pass", r.pass}, {"reason", r.reason}});
      out["attestationPolicy"] = {{"policy", f.policy}, {"requirements", rows}};
    }
    if (!sigs->denied.empty()) out["denied"] = sigs->denied;
    PrintJson(out);
  } else {
    for (const auto& p : report->problems) std::cout << "FAILED " << p.blob << ": " << p.what << "\n";
    if (sigs->signatures) PrintVerdict("SIGNATURE", *sigs->signatures);
    if (sigs->attestations) PrintVerdict("ATTESTATION", *sigs->attestations);
    for (const auto& r : sigs->requirements) {
      std::cout << "ATTESTATION " << r.rule << ": " << (r.pass ? "pass: " : "DENIED: ") << r.reason << "\n";
    }
    std::cout << (report->ok() ? "OK " : "FAILED ") << f.ref << " " << report->manifest.str() << ": "
              << report->blobs_checked << " blobs, " << HumanBytes(report->bytes_checked) << " checked, "
              << report->problems.size() << " problems";
    if (report->diff_ids_known > 0) {
      std::cout << " (" << report->diff_ids_known << " of " << report->diff_ids_known + report->layers_decompressed
                << " diff_ids known from an earlier decompression; --full to inflate every layer)";
    }
    if (report->verdicts_reused > 0) {
      std::cout << " (" << report->verdicts_reused << " repeated descriptors judged by the first read of their blob)";
    }
    std::cout << "\n";
  }
  if (!report->ok()) return ExitCodeFor(ErrorKind::kIntegrity);
  if (!sigs->denied.empty()) {
    if (f.json) return ExitCodeFor(ErrorKind::kDenied);
    return Fail(MakeError(ErrorKind::kDenied, f.ref + " " + report->manifest.str() + ": " + sigs->denied));
  }
  return 0;
}

}  // namespace

void AddVerifyCommand(CLI::App& app, Action& run) {
  auto f = std::make_shared<VerifyFlags>();
  CLI::App* cmd = app.add_subcommand(
      "verify",
      "Check an image, artifact or index end to end, trusting nothing: index -> every\n"
      "image (or the one for --platform) -> manifest -> config -> layers; every blob's size\n"
      "and sha256, media types, and each tar layer's diff_id against its decompressed\n"
      "content (artifacts have none). Every problem is named; exit 4 if any. A registry's\n"
      "blobs are streamed and checked, not stored.\n"
      "Every blob is re-hashed on every run, and read once however many descriptors name\n"
      "it (--json \"stats\": the reads and bytes asked of the source). A layer is not\n"
      "decompressed again when this user's cache ($IMGTOOL_CACHE or ~/.cache/imgtool,\n"
      "diff-ids/) recorded the diff_id of exactly those bytes when imgtool itself built or\n"
      "inflated them; --full inflates all.\n"
      "With --key or --trusted-keys, also: at least one cosign signature at sha256-<hex>.sig\n"
      "verifies with a trusted key and names this digest (exit 5 and the cause if not);\n"
      "--attestation checks the in-toto attestations at sha256-<hex>.att instead (as cosign\n"
      "verify-attestation). An index is signed by its own digest.\n"
      "--attestation --policy FILE: the policy's attestations rule instead of --key/--type\n"
      "(policies/rules/attestations.md): one line per requirement; exit 5 when one fails.\n"
      "Keyless (Sigstore, as cosign verify --certificate-identity): a signature by that identity\n"
      "and OIDC issuer, its Fulcio certificate chained to the trusted root (--trusted-root, else\n"
      "the public-good root built in), its time proven by Rekor or a timestamp authority; found as\n"
      "cosign stores it: sha256-<hex>.sig layers with certificate annotations, or a Sigstore bundle\n"
      "artifact referring to the image (referrers API, else the sha256-<hex> tag).\n\n"
      "Examples:\n  imgtool verify oci:out/golden:latest\n"
      "  imgtool verify --key cosign.pub docker://registry.example:5000/golden:v1\n"
      "  imgtool verify --trusted-keys signatures/trusted --attestation oci:out/golden:latest\n"
      "  imgtool verify --attestation --policy policies/provenance.json oci:out/golden:latest\n"
      "  imgtool verify --certificate-identity https://github.com/org/repo/.github/workflows/ci.yml@refs/heads/main "
      "\\\n"
      "    --certificate-oidc-issuer https://token.actions.githubusercontent.com "
      "docker://registry.example:5000/app:v1");
  cmd->add_option("ref", f->ref,
                  "oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE[:NAME:TAG|:@N] or "
                  "docker://[HOST/]REPO[:TAG|@DIGEST]")
      ->required();
  AddRemoteFlags(cmd, f->remote);
  cmd->add_flag("--json", f->json, "Print a JSON report");
  cmd->add_option("--platform", f->platform, "For an index: check it and only the image for OS/ARCH[/VARIANT]");
  cmd->add_option("--key", f->keys, "Trusted cosign public key (PEM); repeatable");
  cmd->add_option("--trusted-keys", f->trusted_dir, "Folder of trusted *.pub keys (e.g. signatures/trusted)");
  cmd->add_flag("--full", f->full, "Decompress every layer to re-derive its diff_id, even when already known");
  cmd->add_flag("--attestation", f->attestation,
                "Require a trusted in-toto attestation (sha256-<hex>.att) instead of a signature");
  AddKeylessFlags(cmd, f->keyless);
  cmd->add_option("--type", f->predicate_type, "With --attestation: require this predicate type (spdxjson, URI)");
  cmd->add_option("--policy", f->policy,
                  "With --attestation: judge by this policy's attestations rule (policies/*.json)");
  cmd->callback([f, &run] { run = [f] { return RunVerify(*f); }; });
}

}  // namespace imgtool::cli
