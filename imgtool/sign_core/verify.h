// Signature verification as a pure function (cosign's shape): signature layers + the
// digest of the image + trusted keys -> a decision with a reason per signature. No
// I/O: the layout and the registry paths both read the layers (store.h) and call this.
// Two small checks, kept apart: the cryptographic one (does a trusted key verify the
// signature over these exact payload bytes?) and the claim one (does the payload name
// this image?). A signature counts only when both pass.
#pragma once

#include <string>
#include <vector>

#include "oci/digest.h"
#include "oci/manifest.h"
#include "oci/result.h"
#include "sign_core/keys.h"
#include "sign_core/payload.h"

namespace imgtool::sign {

// One layer of a signature image: its descriptor as the manifest lists it (media type,
// digest, the signature annotation) and the blob's bytes as read, unchecked: a blob
// that does not match its descriptor is a finding, not an I/O error.
struct SignatureLayer {
  oci::Descriptor descriptor;
  std::string payload;
};

struct TrustedKey {
  std::string name;  // the file it came from, for reports
  Pkey key;
};

struct SignatureCheck {
  oci::Digest layer;
  bool ok = false;
  std::string key;     // the trusted key that verified it (when the crypto check passed)
  std::string reason;  // why it does not count; empty when ok
  std::string docker_reference;
  // An attestation that verified: its in-toto statement's bytes as signed (what the
  // policy's attestations rule reads the predicate from); empty otherwise.
  std::string statement;
};

struct Decision {
  bool ok = false;
  std::string reason;  // when denied: one line naming the cause
  std::vector<SignatureCheck> signatures;
  std::vector<std::string> verified_keys;  // names of keys with at least one valid signature
};

// The cryptographic check: the name of the first key that verifies `signature` (DER)
// over `message`, or an error (kDenied) naming the keys tried.
Result<std::string> CheckCryptography(std::string_view message, std::string_view der_signature,
                                      const std::vector<TrustedKey>& keys);
// The claim check: payload type and manifest digest (kDenied with the cause).
Status CheckClaims(const Claims& claims, const oci::Digest& image);

// Simple-signing layers (tag sha256-<hex>.sig).
Decision VerifySignatures(const std::vector<SignatureLayer>& layers, const oci::Digest& image,
                          const std::vector<TrustedKey>& keys);

}  // namespace imgtool::sign
