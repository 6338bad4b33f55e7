// cosign's keyless verification flags, shared by verify-blob and verify:
// --certificate-identity[-regexp], --certificate-oidc-issuer[-regexp], --trusted-root;
// and how many verified signing times a bundle needs (sigstore/signed_times.h):
// --timestamp-threshold, --signed-timestamp-threshold, cosign's --use-signed-timestamps,
// --strict-timestamps.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "oci/result.h"
#include "sigstore/certificate.h"
#include "sigstore/signed_times.h"
#include "sigstore/trusted_root.h"

namespace imgtool::cli {

struct KeylessFlags {
  std::string identity, identity_regexp, issuer, issuer_regexp;
  std::string trusted_root;  // "": the built-in public-good root
  sigstore::TimePolicy times;
  bool use_signed_timestamps = false;  // cosign's: at least one timestamp authority

  bool any() const {
    return !identity.empty() || !identity_regexp.empty() || !issuer.empty() || !issuer_regexp.empty();
  }
  // One of each pair, each regexp compiled (Go syntax), or kInvalidInput naming what is
  // missing or the flag whose pattern does not compile.
  Result<sigstore::IdentityPolicy> Policy() const;
  // The time policy the flags give, or kInvalidInput naming the flag out of range.
  Result<sigstore::TimePolicy> Times() const;
};

void AddKeylessFlags(CLI::App* cmd, KeylessFlags& f);

}  // namespace imgtool::cli
