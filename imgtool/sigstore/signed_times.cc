#include "sigstore/signed_times.h"

#include <set>

#include "sigstore/keys.h"
#include "sigstore/timestamp.h"

namespace imgtool::sigstore {

namespace {

Error Denied(const std::string& why) { return MakeError(ErrorKind::kDenied, why); }

// sigstore-python refuses a timestamp listed twice rather than skipping it: a bundle that
// repeats one was not written by a client, and a repeat must never count twice.
Status RefuseRepeats(const std::vector<std::string>& stamps) {
  std::vector<std::string> seen;  // sha256 of each, in order
  for (size_t i = 0; i < stamps.size(); ++i) {
    std::string h = Sha256(stamps[i]);
    for (size_t j = 0; j < seen.size(); ++j) {
      if (seen[j] == h && stamps[j] == stamps[i]) {
        return Denied("timestamps " + std::to_string(j) + " and " + std::to_string(i) +
                      " are the same bytes (a duplicate timestamp)");
      }
    }
    seen.push_back(std::move(h));
  }
  return Status::Ok();
}

// Who vouched, for counting: a TSA's URI names it across the root's entries (one per key
// period); an entry without a URI is an authority of its own.
std::string AuthorityKey(const TrustedRoot& root, size_t index) {
  const std::string& uri = root.timestamp_authorities[index].uri;
  return uri.empty() ? "#" + std::to_string(index) : uri;
}

std::string Count(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string SkippedText(const StampedTimes& stamps) {
  std::string out;
  for (const std::string& s : stamps.skipped) out += "; " + s;
  return out;
}

}  // namespace

Status ValidateTimePolicy(const TimePolicy& policy) {
  if (policy.threshold < 1) {
    return MakeError(ErrorKind::kInvalidInput, "the timestamp threshold (--timestamp-threshold) must be at least 1");
  }
  if (policy.signed_threshold < 0) {
    return MakeError(ErrorKind::kInvalidInput,
                     "the signed timestamp threshold (--signed-timestamp-threshold) must be at least 0");
  }
  return Status::Ok();
}

Result<StampedTimes> VerifyTimestamps(const std::vector<std::string>& stamps, std::string_view signed_bytes,
                                      const TrustedRoot& root, bool strict) {
  if (stamps.size() > kMaxTimestamps) {
    return Denied("too many RFC 3161 timestamps: " + std::to_string(stamps.size()) + " (at most " +
                  std::to_string(kMaxTimestamps) + ")");
  }
  IMGTOOL_TRY(RefuseRepeats(stamps));
  StampedTimes out;
  std::set<std::string> authorities;
  for (size_t i = 0; i < stamps.size(); ++i) {
    auto verdict = VerifyTimestampBy(stamps[i], signed_bytes, root);
    if (!verdict.ok()) {
      std::string why = "timestamp " + std::to_string(i) + ": " + verdict.error().message;
      if (strict) return Denied(why + " (strict: every timestamp must verify)");
      out.skipped.push_back(std::move(why));
      continue;
    }
    out.verified.push_back({i, verdict->time});
    authorities.insert(AuthorityKey(root, verdict->authority));
  }
  out.authorities = authorities.size();
  return out;
}

Status CheckTimeThresholds(size_t integrated, const StampedTimes& stamps, const TimePolicy& policy) {
  size_t total = integrated + stamps.authorities;
  if (total == 0) {
    return Denied(
        "no verified signing time: no log entry has an integrated time signed by its log (an inclusion "
        "promise), and no timestamp verified" +
        SkippedText(stamps));
  }
  if (total < static_cast<size_t>(policy.threshold)) {
    return Denied("not enough verified signing times: " + Count(total, "source", "sources") + " (" +
                  Count(integrated, "log integrated time", "log integrated times") + ", " +
                  Count(stamps.authorities, "timestamp authority", "timestamp authorities") +
                  "), the timestamp threshold is " + std::to_string(policy.threshold) + SkippedText(stamps));
  }
  if (stamps.authorities < static_cast<size_t>(policy.signed_threshold)) {
    return Denied("not enough verified RFC 3161 timestamps: " +
                  Count(stamps.authorities, "timestamp authority", "timestamp authorities") +
                  " vouched, the signed timestamp threshold is " + std::to_string(policy.signed_threshold) +
                  SkippedText(stamps));
  }
  return Status::Ok();
}

}  // namespace imgtool::sigstore
