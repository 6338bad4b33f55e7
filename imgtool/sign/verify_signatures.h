// The one call the policy engine (and `imgtool verify --key`) needs: is this image
// signed by one of these keys? Opens the image's signatures wherever they live
// (store.h), loads the keys, and runs the pure decision (verify.h).
#pragma once

#include <string>
#include <vector>

#include "oci/digest.h"
#include "oci/result.h"
#include "ref/reference.h"
#include "remote/registry.h"
#include "sign/keyless.h"
#include "sign_core/verify.h"

namespace imgtool::sign {

struct SignatureVerdict {
  bool verified = false;
  oci::Digest image;                       // the digest the signatures were checked against
  std::string reason;                      // when not verified: the cause, one line
  std::vector<std::string> verified_keys;  // key paths with a valid signature
  std::vector<SignatureCheck> signatures;  // every signature found, with its reason
};

// An error only when the check could not run (unreadable key, unknown image, registry
// down); a missing or invalid signature is verified == false with a reason.
Result<SignatureVerdict> VerifyImageSignatures(const ref::Reference& ref,
                                               const std::vector<std::string>& trusted_key_paths,
                                               const remote::RegistryOptions& opts = {});

// The same for attestations (sha256-<hex>.att); `predicate_type` empty: any type.
Result<SignatureVerdict> VerifyImageAttestations(const ref::Reference& ref,
                                                 const std::vector<std::string>& trusted_key_paths,
                                                 const std::string& predicate_type,
                                                 const remote::RegistryOptions& opts = {});

// Keyless: signatures (or, with `attestation`, attestations of `predicate_type`) by the
// identity `policy` names, under its trusted root, in both of cosign's storage formats
// (legacy tags and Sigstore bundle referrers; keyless.h).
Result<SignatureVerdict> VerifyImageKeyless(const ref::Reference& ref, const KeylessPolicy& policy, bool attestation,
                                            const std::string& predicate_type,
                                            const remote::RegistryOptions& opts = {});

// Every *.pub file in `dir`, sorted (a trust folder such as signatures/trusted/).
Result<std::vector<std::string>> PublicKeysIn(const std::string& dir);
Result<std::vector<TrustedKey>> LoadTrustedKeys(const std::vector<std::string>& paths);

}  // namespace imgtool::sign
