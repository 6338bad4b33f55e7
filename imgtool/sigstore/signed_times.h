// When a bundle proves its signature existed: how many verified times it must have, and
// which of its RFC 3161 timestamps count. The rules are sigstore-go's
// (WithObserverTimestamps / WithSignedTimestamps): a timestamp that does not verify is
// skipped, not fatal, and the verified ones (with the Rekor integrated times) are counted
// against thresholds; a timestamp authority counts once however many of its timestamps
// the bundle carries. What sigstore-python refuses outright is refused here too: more
// than 32 timestamps, and one timestamp listed twice.
//
// Every time that verifies, counted or not, is a time the certificate must be valid at
// (the verifier checks the chain at each): skipping concerns only what does not verify.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "oci/result.h"
#include "sigstore/bundle.h"
#include "sigstore/time.h"
#include "sigstore/trusted_root.h"

namespace imgtool::sigstore {

// The defaults are cosign's and sigstore-python's: one verified time of any kind.
struct TimePolicy {
  // Verified times of either kind: Rekor integrated times (an inclusion promise signed
  // them) plus timestamp authorities (sigstore-go's WithObserverTimestamps). At least 1.
  int threshold = 1;
  // Timestamp authorities that must vouch (WithSignedTimestamps; cosign's
  // --use-signed-timestamps is 1). 0: none required.
  int signed_threshold = 0;
  // Every RFC 3161 timestamp of the bundle must verify (imgtool's rule before issue 25).
  bool strict = false;
};

// kInvalidInput naming the flag for a threshold below its minimum.
Status ValidateTimePolicy(const TimePolicy& policy);

struct StampedTime {
  size_t index = 0;  // in the bundle's rfc3161Timestamps
  Time time = 0;     // genTime
};

// A bundle's RFC 3161 timestamps after verification.
struct StampedTimes {
  std::vector<StampedTime> verified;
  size_t authorities = 0;            // distinct timestamp authorities among `verified`
  std::vector<std::string> skipped;  // "timestamp 1: <why>", for each that did not verify
};

// Verifies each timestamp over `signed_bytes` (the bundle's signature) with the TSAs of
// `root`. kDenied: more than kMaxTimestamps (bundle.h), the same bytes listed twice, or (strict) any
// timestamp that does not verify. A TSA is one authority per URI (per entry without one).
Result<StampedTimes> VerifyTimestamps(const std::vector<std::string>& stamps, std::string_view signed_bytes,
                                      const TrustedRoot& root, bool strict);

// `integrated`: Rekor integrated times that verified, one per log entry. kDenied when a
// threshold of `policy` is not met, naming the counts and why each skipped timestamp was.
Status CheckTimeThresholds(size_t integrated, const StampedTimes& stamps, const TimePolicy& policy);

}  // namespace imgtool::sigstore
