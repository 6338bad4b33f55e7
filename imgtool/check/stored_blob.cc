#include "check/stored_blob.h"

#include <algorithm>

namespace imgtool::check {

namespace {

uint64_t ClaimedSize(const Claim& c) { return static_cast<uint64_t>(std::max<int64_t>(c.descriptor->size, 0)); }

}  // namespace

std::optional<ReadPlan> PlanRead(const StoredBlob* known, const Claim& claim) {
  const uint64_t size = ClaimedSize(claim);
  const bool want_diff_id = claim.diff_id != nullptr;
  if (known == nullptr) return ReadPlan{size, want_diff_id};
  if (!known->error.empty()) return std::nullopt;  // missing stays missing
  bool inflate = want_diff_id && !known->diff_id && known->inflate_error.empty();
  if (known->complete) {
    if (inflate) return ReadPlan{known->size, true};
    return std::nullopt;
  }
  // Cut short at a smaller claim: read again, at least twice as far, so that claims
  // growing by a byte each cost a number of reads logarithmic in the size, not one each.
  if (known->longer_than && size > *known->longer_than) {
    return ReadPlan{std::max(size, 2 * *known->longer_than), inflate};
  }
  // Inflating failed before the raw bytes ended: a claim without a diff_id wants them hashed.
  if (!known->longer_than && !known->inflate_error.empty() && !want_diff_id) return ReadPlan{size, false};
  return std::nullopt;
}

void Merge(StoredBlob& known, const StoredBlob& read) {
  if (!read.error.empty() && !known.complete) {
    known.error = read.error;
    known.error_claim = read.error_claim;
  }
  if (read.complete) {
    known.complete = true;
    known.size = read.size;
    known.sha256 = read.sha256;
    known.longer_than.reset();
  } else if (read.longer_than && !known.complete) {
    known.longer_than = std::max(known.longer_than.value_or(0), *read.longer_than);
  }
  if (read.diff_id) {
    known.diff_id = read.diff_id;
    known.diff_id_recorded = read.diff_id_recorded;
    known.inflate_error.clear();
  } else if (!read.inflate_error.empty() && !known.diff_id) {
    known.inflate_error = read.inflate_error;
  }
}

std::vector<std::string> Judge(const StoredBlob& known, const Claim& claim) {
  const oci::Descriptor& d = *claim.descriptor;
  if (!known.error.empty()) {
    if (known.error_claim == d.size) return {known.error};
    return {"read for a descriptor of " + std::to_string(known.error_claim) + " bytes: " + known.error};
  }
  std::vector<std::string> out;
  if (!known.complete) {
    if (known.longer_than && ClaimedSize(claim) <= *known.longer_than) {
      out.push_back("more than the " + std::to_string(d.size) + " bytes its descriptor names");
    } else {
      out.push_back(known.inflate_error.empty() ? "not read to its end" : known.inflate_error);
    }
    return out;
  }
  if (known.size != ClaimedSize(claim) || d.size < 0) {
    out.push_back("size " + std::to_string(known.size) + ", manifest says " + std::to_string(d.size));
  } else if (known.sha256 != d.digest) {
    out.push_back("content hashes to " + known.sha256.str());
  }
  if (!claim.diff_id) return out;
  // A recorded diff_id belongs to the bytes it was recorded for, and these may not be them.
  if (known.diff_id && (!known.diff_id_recorded || known.sha256 == d.digest)) {
    if (*known.diff_id != *claim.diff_id) {
      out.push_back("uncompressed content hashes to " + known.diff_id->str() + ", config diff_id is " +
                    claim.diff_id->str());
    }
  } else if (!known.inflate_error.empty()) {
    out.push_back(known.inflate_error);
  }
  return out;
}

}  // namespace imgtool::check
