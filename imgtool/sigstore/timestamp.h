// RFC 3161 signed timestamps (a bundle's timestampVerificationData.rfc3161Timestamps):
// proof, from a timestamp authority of the trusted root, that the bundle's signature
// existed at the token's genTime. Verification follows sigstore-go (timestamp-authority's
// VerifyTimestampResponse and the trusted root's validity periods); OpenSSL's TS API does
// the CMS signature, the ESS signing-certificate binding and the message imprint.
#pragma once

#include <cstddef>
#include <string_view>

#include "oci/result.h"
#include "sigstore/time.h"
#include "sigstore/trusted_root.h"

namespace imgtool::sigstore {

// A timestamp larger than this is refused before it is parsed (a response with a full
// embedded chain is a few KiB).
inline constexpr size_t kMaxTimestamp = 64 << 10;

// Verifies one DER TimeStampResp (status granted, then the token) over `signed_bytes`: the
// bundle's signature bytes (messageSignature.signature, or the DSSE envelope's signature).
// The message imprint must be the sha256/384/512 hash of those bytes, with the imprint's
// own algorithm. One timestamp authority of `root` must vouch for it:
//  - the token is signed by that TSA's signing certificate (the first of its chain), found
//    through the trusted chain; certificates embedded in the token are only hints, and a
//    token without any verifies the same way;
//  - that chain is valid at genTime (not now: a TSA's certificates may expire later), the
//    signing certificate has the critical timeStamping EKU alone, as has any intermediate;
//  - genTime lies within the TSA's validFor (both ends inclusive).
// Returns genTime in whole seconds (a fraction is dropped). Errors: kInvalidInput for what
// is not a timestamp response, kDenied for one no trusted TSA vouches for.
Result<Time> VerifyTimestamp(std::string_view der, std::string_view signed_bytes, const TrustedRoot& root);

// The same, saying which authority vouched: its index in root.timestamp_authorities (the
// first that does, in the root's order).
struct TimestampVerdict {
  Time time = 0;
  size_t authority = 0;
};
Result<TimestampVerdict> VerifyTimestampBy(std::string_view der, std::string_view signed_bytes,
                                           const TrustedRoot& root);

}  // namespace imgtool::sigstore
