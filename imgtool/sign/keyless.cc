#include "sign/keyless.h"

#include "oci/base64.h"
#include "oci/canonical_json.h"
#include "oci/hex.h"
#include "sign_core/dsse.h"
#include "sign_core/payload.h"
#include "sigstore/verifier.h"

namespace imgtool::sign {

namespace {

Error Invalid(const std::string& why) { return MakeError(ErrorKind::kInvalidInput, why); }

std::string Annotation(const SignatureLayer& l, std::string_view key) {
  auto it = l.descriptor.annotations.find(std::string(key));
  return it == l.descriptor.annotations.end() ? "" : it->second;
}

// cosign's dev.sigstore.cosign/bundle: {"SignedEntryTimestamp": b64, "Payload": {"body":
// b64, "integratedTime": n, "logIndex": n, "logID": hex}}, as one Rekor v1 log entry.
Result<sigstore::TlogEntry> EntryFromRekorBundle(std::string_view text) {
  auto j = oci::ParseJson(text, std::string(kRekorBundleAnnotation));
  if (!j.ok()) return j.error();
  const oci::Json* payload = j->is_object() && j->contains("Payload") ? &(*j)["Payload"] : nullptr;
  if (payload == nullptr || !payload->is_object() || !(*payload)["integratedTime"].is_number_integer() ||
      !(*payload)["logIndex"].is_number_integer()) {
    return Invalid(std::string(kRekorBundleAnnotation) +
                   ": want SignedEntryTimestamp and Payload{body, integratedTime, logIndex, logID}");
  }
  sigstore::TlogEntry e;
  auto set = oci::Base64Decode(oci::StringMember(*j, "SignedEntryTimestamp"), "SignedEntryTimestamp");
  auto body = oci::Base64Decode(oci::StringMember(*payload, "body"), "Payload.body");
  if (!set.ok()) return set.error();
  if (!body.ok()) return body.error();
  e.signed_entry_timestamp = *set;
  e.canonicalized_body = *body;
  e.integrated_time = (*payload)["integratedTime"].get<int64_t>();
  e.log_index = (*payload)["logIndex"].get<int64_t>();
  auto log_id = oci::HexDecode(oci::StringMember(*payload, "logID"));
  if (!log_id || log_id->size() != 32) {
    return Invalid(std::string(kRekorBundleAnnotation) + ": logID is not 64 hex digits");
  }
  e.log_id = *log_id;
  auto kind = oci::ParseJson(e.canonicalized_body, "rekor entry body");
  if (!kind.ok()) return kind.error();
  e.kind = oci::StringMember(*kind, "kind");
  e.kind_version = oci::StringMember(*kind, "apiVersion");
  return e;
}

Result<std::string> TimestampFromAnnotation(std::string_view text) {
  auto j = oci::ParseJson(text, std::string(kTimestampAnnotation));
  if (!j.ok()) return j.error();
  return oci::Base64Decode(oci::StringMember(*j, "SignedRFC3161Timestamp"), std::string(kTimestampAnnotation));
}

// The layer's content: a DSSE envelope (an attestation) or a message signature over
// the payload (the simple-signing claims).
Status LegacyContent(const SignatureLayer& l, sigstore::Bundle* b) {
  if (l.descriptor.media_type == kDsseMediaType) {
    auto envelope = sigstore::ParseDsseEnvelope(l.payload, "DSSE envelope " + l.descriptor.digest.str());
    if (!envelope.ok()) return envelope.error();
    b->dsse_envelope = std::move(*envelope);
    return Status::Ok();
  }
  auto sig = oci::Base64Decode(Annotation(l, kSignatureAnnotation), std::string(kSignatureAnnotation));
  if (!sig.ok()) return sig.error();
  b->message_signature = sigstore::MessageSignature{"SHA2_256", sigstore::Sha256(l.payload), *sig};
  return Status::Ok();
}

}  // namespace

Result<sigstore::Bundle> BundleFromLegacyLayer(const SignatureLayer& l) {
  sigstore::Bundle b;
  b.media_type = "cosign legacy signature layer";
  b.minor_version = 1;
  std::string pem = Annotation(l, kCertificateAnnotation);
  if (pem.empty()) return Invalid("no " + std::string(kCertificateAnnotation) + " annotation (a key-based signature)");
  auto certs = sigstore::ParseCertificatesPem(pem, std::string(kCertificateAnnotation), 1);
  if (!certs.ok()) return certs.error();
  b.certificates = *certs;
  IMGTOOL_TRY(LegacyContent(l, &b));
  std::string rekor = Annotation(l, kRekorBundleAnnotation);
  if (!rekor.empty()) {
    auto entry = EntryFromRekorBundle(rekor);
    if (!entry.ok()) return entry.error();
    b.tlog_entries.push_back(std::move(*entry));
  }
  std::string stamp = Annotation(l, kTimestampAnnotation);
  if (!stamp.empty()) {
    auto der = TimestampFromAnnotation(stamp);
    if (!der.ok()) return der.error();
    b.rfc3161_timestamps.push_back(*der);
  }
  return b;
}

namespace {

std::string PredicateTypeOf(const sigstore::Bundle& b) {
  if (!b.dsse_envelope) return "";
  auto j = oci::ParseJson(b.dsse_envelope->payload, "in-toto statement");
  return j.ok() && j->is_object() ? oci::StringMember(*j, "predicateType") : "";
}

// One candidate through the verifier; `claims` checks what it says about the image.
SignatureCheck Check(const SignatureLayer& l, const Result<sigstore::Bundle>& bundle,
                     const sigstore::Artifact& artifact, const KeylessPolicy& policy,
                     const std::function<std::string(const sigstore::Bundle&)>& claims) {
  SignatureCheck c;
  c.layer = l.descriptor.digest;
  if (!bundle.ok()) {
    c.reason = bundle.error().message;
    return c;
  }
  sigstore::VerifyPolicy vp;
  vp.identity = policy.identity;
  vp.times = policy.times;
  auto v = sigstore::VerifyBundle(*bundle, *policy.root, artifact, vp);
  if (!v.ok()) {
    c.reason = v.error().message;
    return c;
  }
  c.reason = claims(*bundle);
  c.ok = c.reason.empty();
  c.key = v->signer + " (" + v->issuer + ")";
  if (c.ok && bundle->dsse_envelope) c.statement = bundle->dsse_envelope->payload;
  return c;
}

Decision Decide(std::vector<SignatureCheck> checks, const std::string& what) {
  Decision d;
  d.signatures = std::move(checks);
  for (const auto& c : d.signatures) {
    if (c.ok) {
      d.ok = true;
      d.verified_keys.push_back(c.key);
    }
  }
  if (d.signatures.empty())
    d.reason = "no keyless " + what + " found (legacy sha256-<hex> tags or Sigstore bundle referrers)";
  if (!d.ok && !d.signatures.empty()) d.reason = "no keyless " + what + " verifies: " + d.signatures[0].reason;
  return d;
}

}  // namespace

Decision VerifyKeylessSignatures(const std::vector<SignatureLayer>& legacy, const std::vector<SignatureLayer>& bundles,
                                 const oci::Digest& image, const KeylessPolicy& policy) {
  std::vector<SignatureCheck> checks;
  for (const auto& l : legacy) {
    auto names_image = [&](const sigstore::Bundle&) -> std::string {
      auto claims = ParseSimpleSigningPayload(l.payload, "payload " + l.descriptor.digest.str());
      if (!claims.ok()) return claims.error().message;
      if (claims->manifest_digest != image.str())
        return "the payload names " + claims->manifest_digest + ", not " + image.str();
      return "";
    };
    checks.push_back(Check(l, BundleFromLegacyLayer(l), sigstore::ArtifactOf(l.payload), policy, names_image));
  }
  for (const auto& l : bundles) {
    auto is_signature = [&](const sigstore::Bundle& b) -> std::string {
      if (!b.dsse_envelope) return "";
      std::string got = PredicateTypeOf(b);
      if (got == kCosignSignPredicate) return "";
      return "the bundle attests '" + got + "', not a signature (" + std::string(kCosignSignPredicate) + ")";
    };
    checks.push_back(Check(l, sigstore::ParseBundle(l.payload, "bundle " + l.descriptor.digest.str()),
                           sigstore::ArtifactOfDigest(image), policy, is_signature));
  }
  return Decide(std::move(checks), "signature");
}

Decision VerifyKeylessAttestations(const std::vector<SignatureLayer>& legacy,
                                   const std::vector<SignatureLayer>& bundles, const oci::Digest& image,
                                   const KeylessPolicy& policy, const std::string& predicate_type) {
  auto of_type = [&](const sigstore::Bundle& b) -> std::string {
    if (!b.dsse_envelope) return "a message signature, not an attestation";
    std::string got = PredicateTypeOf(b);
    if (predicate_type.empty() ? got == kCosignSignPredicate : got != predicate_type) {
      return "predicateType is '" + got + "'" + (predicate_type.empty() ? "" : ", want '" + predicate_type + "'");
    }
    return "";
  };
  std::vector<SignatureCheck> checks;
  for (const auto& l : legacy)
    checks.push_back(Check(l, BundleFromLegacyLayer(l), sigstore::ArtifactOfDigest(image), policy, of_type));
  for (const auto& l : bundles) {
    checks.push_back(Check(l, sigstore::ParseBundle(l.payload, "bundle " + l.descriptor.digest.str()),
                           sigstore::ArtifactOfDigest(image), policy, of_type));
  }
  return Decide(std::move(checks), "attestation");
}

}  // namespace imgtool::sign
