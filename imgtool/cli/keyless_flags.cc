#include "cli/keyless_flags.h"

namespace imgtool::cli {

namespace {

// A pattern flag compiled as it is read (Go's syntax, as cosign's), so that a bad one is
// exit 2 naming the flag before anything is fetched, and each match is linear.
Status CompileFlag(const char* flag, const std::string& pattern, std::optional<regexp::GoRegexp>& out) {
  if (pattern.empty()) return Status::Ok();
  auto re = regexp::GoRegexp::Compile(pattern);
  if (!re.ok()) return re.error().Context(std::string(flag) + " '" + pattern + "'");
  out = std::move(*re);
  return Status::Ok();
}

}  // namespace

Result<sigstore::IdentityPolicy> KeylessFlags::Policy() const {
  if (identity.empty() == identity_regexp.empty() || issuer.empty() == issuer_regexp.empty()) {
    return MakeError(ErrorKind::kInvalidInput,
                     "keyless verification needs one of --certificate-identity / --certificate-identity-regexp and one "
                     "of --certificate-oidc-issuer / --certificate-oidc-issuer-regexp");
  }
  sigstore::IdentityPolicy policy{identity, {}, issuer, {}};
  IMGTOOL_TRY(CompileFlag("--certificate-identity-regexp", identity_regexp, policy.subject_regexp));
  IMGTOOL_TRY(CompileFlag("--certificate-oidc-issuer-regexp", issuer_regexp, policy.issuer_regexp));
  return policy;
}

Result<sigstore::TimePolicy> KeylessFlags::Times() const {
  sigstore::TimePolicy t = times;
  if (use_signed_timestamps && t.signed_threshold < 1) t.signed_threshold = 1;
  IMGTOOL_TRY(sigstore::ValidateTimePolicy(t));
  return t;
}

void AddKeylessFlags(CLI::App* cmd, KeylessFlags& f) {
  cmd->add_option("--certificate-identity", f.identity,
                  "Keyless: the signer's identity (certificate SAN: email or URI), exactly");
  cmd->add_option(
      "--certificate-identity-regexp", f.identity_regexp,
      "Keyless: the signer's identity, as a Go (RE2) regexp, searched for as cosign does: anchor with ^ and $");
  cmd->add_option("--certificate-oidc-issuer", f.issuer, "Keyless: the OIDC issuer, exactly");
  cmd->add_option("--certificate-oidc-issuer-regexp", f.issuer_regexp,
                  "Keyless: the OIDC issuer, as a Go (RE2) regexp, searched for as cosign does: anchor with ^ and $");
  cmd->add_option("--trusted-root", f.trusted_root,
                  "Keyless: trusted_root.json to trust (default: the Sigstore public-good root built into imgtool)");
  cmd->add_option("--timestamp-threshold", f.times.threshold,
                  "Verified signing times needed: Rekor integrated times plus timestamp authorities (each TSA counts "
                  "once; a timestamp that does not verify is skipped), as sigstore-go's observer timestamps")
      ->capture_default_str();
  cmd->add_option("--signed-timestamp-threshold", f.times.signed_threshold,
                  "RFC 3161 timestamps from distinct timestamp authorities needed (0: none)")
      ->capture_default_str();
  cmd->add_flag("--use-signed-timestamps", f.use_signed_timestamps,
                "As cosign: require a verified RFC 3161 timestamp (--signed-timestamp-threshold 1)");
  cmd->add_flag("--strict-timestamps", f.times.strict,
                "Refuse a bundle any of whose RFC 3161 timestamps does not verify");
}

}  // namespace imgtool::cli
