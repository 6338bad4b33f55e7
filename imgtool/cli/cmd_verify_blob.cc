// imgtool verify-blob: a Sigstore bundle over a file (or a digest), verified offline as
// cosign verify-blob does: keyless with --certificate-identity[-regexp] and
// --certificate-oidc-issuer[-regexp] against a trusted root (the public-good one built
// in, or --trusted-root), or with --key for key-based bundles.
#include <iostream>

#include "cli/keyless_flags.h"
#include "cli/output.h"
#include "fs/atomic_file.h"
#include "fs/safe_open.h"
#include "sigstore/verifier.h"

namespace imgtool::cli {

namespace {

struct VerifyBlobFlags {
  std::string artifact;  // FILE or sha256:HEX
  std::string bundle;
  KeylessFlags keyless;
  std::string key;
  bool json = false;
};

// Bytes of the artifact kept for keys that sign messages rather than digests (Ed25519);
// a larger file is only hashed, streaming.
constexpr uint64_t kKeepBytes = 16 << 20;

// The file hashed once as it streams: sha256, and the other digests the bundle signs
// (`more`: sha384 or sha512, when its messageDigest or log entry names them).
Result<sigstore::Artifact> ReadArtifact(const std::string& arg, const std::vector<sigstore::HashAlgorithm>& more) {
  if (arg.rfind("sha256:", 0) == 0) return sigstore::ArtifactFromDigest(arg);
  uint64_t size = 0;
  auto fd = fs::OpenRegular(arg, &size);
  if (!fd.ok()) return fd.error();
  fs::FdReader reader(std::move(*fd));
  std::vector<sigstore::HashAlgorithm> algorithms{sigstore::HashAlgorithm::kSha256};
  algorithms.insert(algorithms.end(), more.begin(), more.end());
  sigstore::MultiHasher hash(algorithms);
  std::string kept, buf(1 << 20, '\0');
  bool keep = size <= kKeepBytes;
  for (;;) {
    auto n = reader.Read(buf.data(), buf.size());
    if (!n.ok()) return n.error().Context("reading " + arg);
    if (*n == 0) break;
    hash.Update(buf.data(), *n);
    keep = keep && kept.size() + *n <= kKeepBytes;  // a file that grew while read is only hashed
    if (keep) kept.append(buf.data(), *n);
  }
  std::vector<std::string> digests = hash.Finish();
  sigstore::Artifact a{digests[0], std::nullopt, {}};
  for (size_t i = 1; i < digests.size(); ++i) a.more.push_back({algorithms[i], digests[i]});
  if (keep) a.bytes = std::move(kept);
  return a;
}

Result<sigstore::VerifyPolicy> PolicyFrom(const VerifyBlobFlags& f) {
  sigstore::VerifyPolicy p;
  auto times = f.keyless.Times();
  if (!times.ok()) return times.error();
  p.times = *times;
  if (!f.key.empty()) {
    if (f.keyless.any())
      return MakeError(ErrorKind::kInvalidInput, "--key and --certificate-* are two ways to verify: give one");
    auto pem = fs::ReadSmallFile(f.key, 64 << 10);
    if (!pem.ok()) return pem.error().Context("--key");
    auto key = sigstore::ParsePublicKeyPemAny(*pem, f.key);
    if (!key.ok()) return key.error();
    p.key = *key;
    return p;
  }
  auto identity = f.keyless.Policy();
  if (!identity.ok() && !f.keyless.any()) {
    return MakeError(ErrorKind::kInvalidInput, identity.error().message + " (or --key for a key-based bundle)");
  }
  if (!identity.ok()) return identity.error();
  p.identity = *identity;
  return p;
}

Result<sigstore::Verified> VerifyBlob(const VerifyBlobFlags& f) {
  auto policy = PolicyFrom(f);
  if (!policy.ok()) return policy.error();
  // --key: the root's Fulcio chains and CT logs are not read (a certificate bundle is refused).
  auto root = sigstore::LoadTrustedRoot(f.keyless.trusted_root,
                                        f.key.empty() ? sigstore::RootUse::kAll : sigstore::RootUse::kKeyBased);
  if (!root.ok()) return root.error().Context("--trusted-root");
  auto text = fs::ReadSmallFile(f.bundle, sigstore::kMaxBundle);
  if (!text.ok()) return text.error().Context("--bundle");
  auto bundle = sigstore::ParseBundle(*text, f.bundle);
  if (!bundle.ok()) return bundle.error();
  auto artifact = ReadArtifact(f.artifact, sigstore::MessageHashes(*bundle));
  if (!artifact.ok()) return artifact.error();
  return sigstore::VerifyBundle(*bundle, *root, *artifact, *policy);
}

oci::Json TimesJson(const sigstore::Verified& v) {
  oci::Json out = oci::Json::array();
  for (const auto& t : v.times) out.push_back({{"time", sigstore::FormatRfc3339(t.time)}, {"source", t.source}});
  return out;
}

int RunVerifyBlob(const VerifyBlobFlags& f) {
  auto v = VerifyBlob(f);
  if (f.json) {
    oci::Json out = {{"artifact", f.artifact}, {"bundle", f.bundle}, {"verified", v.ok()}};
    if (v.ok()) {
      out.update({{"signer", v->signer},
                  {"issuer", v->issuer},
                  {"content", v->content},
                  {"times", TimesJson(*v)},
                  {"logEntries", v->log_entries}});
    } else {
      out["error"] = v.error().message;
    }
    PrintJson(out);
    return v.ok() ? 0 : ExitCodeFor(v.error().kind);
  }
  if (!v.ok()) return Fail(v.error().Context(f.artifact));
  std::cout << "Verified OK " << f.artifact << ": " << v->content << " by " << v->signer;
  if (!v->issuer.empty()) std::cout << " (issuer " << v->issuer << ")";
  std::cout << ", signed at " << sigstore::FormatRfc3339(v->times.front().time) << " (" << v->times.front().source
            << ")\n";
  return 0;
}

}  // namespace

void AddVerifyBlobCommand(CLI::App& app, Action& run) {
  auto f = std::make_shared<VerifyBlobFlags>();
  CLI::App* cmd = app.add_subcommand(
      "verify-blob",
      "Verify a Sigstore bundle (cosign sign-blob --bundle, GitHub/GitLab CI keyless signing) over a file,\n"
      "offline, as cosign verify-blob does. Keyless: the Fulcio certificate chains to the trusted root at\n"
      "the signing time, carries a valid SCT and names the identity and issuer asked for; the signing\n"
      "time is proven by a Rekor entry (inclusion promise or proof with a signed checkpoint, v1 and v2\n"
      "logs) or an RFC 3161 timestamp (one that does not verify is skipped; --timestamp-threshold N,\n"
      "--use-signed-timestamps, --strict-timestamps ask for more); the log entry matches the signature,\n"
      "certificate and artifact, under the hash the bundle and entry name (sha256, sha384 or sha512).\n"
      "Message signatures and DSSE (in-toto) envelopes, bundles v0.1 to v0.3. --key: a key-based bundle.\n"
      "Exit 0 verified, 5 denied (the reason is printed), 2 bad input.\n\n"
      "Examples:\n"
      "  imgtool verify-blob --bundle app.sigstore.json \\\n"
      "    --certificate-identity https://github.com/org/repo/.github/workflows/release.yml@refs/tags/v1.0 \\\n"
      "    --certificate-oidc-issuer https://token.actions.githubusercontent.com app.tar.gz\n"
      "  imgtool verify-blob --bundle b.json --certificate-identity-regexp '^https://github.com/org/' \\\n"
      "    --certificate-oidc-issuer https://token.actions.githubusercontent.com sha256:<hex>\n"
      "  imgtool verify-blob --bundle b.json --key cosign.pub app.tar.gz");
  cmd->add_option("artifact", f->artifact, "The signed file, or sha256:<hex> of it")->required();
  cmd->add_option("--bundle", f->bundle, "The Sigstore bundle (JSON)")->required();
  AddKeylessFlags(cmd, f->keyless);
  cmd->add_option("--key", f->key, "Verify a key-based bundle with this public key (PEM)");
  cmd->add_flag("--json", f->json, "Print a JSON report (verified, signer, issuer, times, logEntries or error)");
  cmd->callback([f, &run] { run = [f] { return RunVerifyBlob(*f); }; });
}

}  // namespace imgtool::cli
