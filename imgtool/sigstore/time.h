// Times in Sigstore documents: RFC 3339 in trusted roots ("2021-01-12T11:53:27Z", with an
// optional fraction), seconds since the epoch as decimal strings in bundles. Everything
// here is whole seconds since the epoch (a fraction is dropped: periods end at .999).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "oci/result.h"

namespace imgtool::sigstore {

using Time = int64_t;

// A validity period; both ends inclusive (the trusted root's `end` is the last valid instant).
struct Validity {
  Time start = std::numeric_limits<Time>::min();
  Time end = std::numeric_limits<Time>::max();
  bool Contains(Time t) const { return start <= t && t <= end; }
};

// "YYYY-MM-DDTHH:MM:SS[.fff...]Z" (UTC only, as protobuf's JSON writes Timestamps).
Result<Time> ParseRfc3339(std::string_view text, const std::string& what);
// "2021-01-12T11:53:27Z".
std::string FormatRfc3339(Time t);

}  // namespace imgtool::sigstore
