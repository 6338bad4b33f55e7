#include "sigstore/tlog.h"

#include "oci/base64.h"
#include "oci/canonical_json.h"
#include "oci/hex.h"
#include "sigstore/checkpoint.h"
#include "sigstore/merkle.h"

namespace imgtool::sigstore {

namespace {

Error Refused(const std::string& what, const std::string& why) {
  return MakeError(ErrorKind::kDenied, what + ": " + why);
}

Status SameLog(const TlogEntry& entry, const LogKey& log, const std::string& what) {
  if (entry.log_id.empty() || entry.log_id != log.log_id) return Refused(what, "the entry is not from this log");
  return Status::Ok();
}

}  // namespace

Status VerifySignedEntryTimestamp(const TlogEntry& entry, const LogKey& log) {
  const std::string what = "signed entry timestamp";
  IMGTOOL_TRY(SameLog(entry, log, what));
  if (entry.signed_entry_timestamp.empty()) return Refused(what, "missing");
  if (!entry.integrated_time.has_value()) return Refused(what, "the entry has no integratedTime");
  if (!log.valid_for.Contains(*entry.integrated_time)) {
    return Refused(what, "integratedTime is outside the log key's validity");
  }
  // What Rekor v1 signs (its SET payload): sorted keys, no spaces, which CanonicalJson writes.
  oci::Json payload = {{"body", oci::Base64Encode(entry.canonicalized_body)},
                       {"integratedTime", *entry.integrated_time},
                       {"logID", oci::HexEncode(entry.log_id)},
                       {"logIndex", entry.log_index}};
  auto text = oci::CanonicalJson(payload);
  if (!text.ok()) return text.error();
  if (!VerifyMessage(log.key, *text, entry.signed_entry_timestamp)) return Refused(what, "signature does not verify");
  return Status::Ok();
}

Status VerifyInclusionProof(const TlogEntry& entry, const LogKey& log) {
  const std::string what = "inclusion proof";
  IMGTOOL_TRY(SameLog(entry, log, what));
  if (!entry.inclusion_proof.has_value()) return Refused(what, "missing");
  const InclusionProof& proof = *entry.inclusion_proof;
  IMGTOOL_TRY(VerifyMerkleInclusion(proof.log_index, proof.tree_size, MerkleLeafHash(entry.canonicalized_body),
                                    proof.hashes, proof.root_hash));
  if (proof.checkpoint.empty()) return Refused(what, "no checkpoint");
  auto cp = VerifyCheckpoint(proof.checkpoint, log);
  if (!cp.ok()) return cp.error();
  if (cp->size != proof.tree_size) return Refused(what, "the checkpoint is for another tree size");
  if (cp->root_hash != proof.root_hash) return Refused(what, "the checkpoint's root hash is not the proof's");
  if (cp->origin == UrlHost(log.base_url) && entry.log_index != proof.log_index) {
    return Refused(what, "the entry's log index is not the proof's");
  }
  return Status::Ok();
}

}  // namespace imgtool::sigstore
