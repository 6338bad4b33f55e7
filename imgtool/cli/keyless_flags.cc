#include "cli/keyless_flags.h"

namespace imgtool::cli {

Result<sigstore::IdentityPolicy> KeylessFlags::Policy() const {
  if (identity.empty() == identity_regexp.empty() || issuer.empty() == issuer_regexp.empty()) {
    return MakeError(ErrorKind::kInvalidInput,
                     "keyless verification needs one of --certificate-identity / --certificate-identity-regexp and one "
                     "of --certificate-oidc-issuer / --certificate-oidc-issuer-regexp");
  }
  return sigstore::IdentityPolicy{identity, identity_regexp, issuer, issuer_regexp};
}

void AddKeylessFlags(CLI::App* cmd, KeylessFlags& f) {
  cmd->add_option("--certificate-identity", f.identity, "Keyless: the signer's identity (certificate SAN: email or URI), exactly");
  cmd->add_option("--certificate-identity-regexp", f.identity_regexp, "Keyless: the signer's identity, as a regexp (searched, as cosign: anchor with ^ and $)");
  cmd->add_option("--certificate-oidc-issuer", f.issuer, "Keyless: the OIDC issuer, exactly");
  cmd->add_option("--certificate-oidc-issuer-regexp", f.issuer_regexp, "Keyless: the OIDC issuer, as a regexp (searched, as cosign: anchor with ^ and $)");
  cmd->add_option("--trusted-root", f.trusted_root,
                  "Keyless: trusted_root.json to trust (default: the Sigstore public-good root built into imgtool)");
}

}  // namespace imgtool::cli
