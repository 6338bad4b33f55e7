#include "sigstore/verifier.h"

#include <openssl/x509.h>

#include "oci/canonical_json.h"
#include "oci/digest.h"
#include "sign/dsse.h"
#include "sigstore/entry_body.h"
#include "sigstore/hex.h"
#include "sigstore/sct.h"
#include "sigstore/timestamp.h"
#include "sigstore/tlog.h"

namespace imgtool::sigstore {

namespace {

Error Denied(const std::string& why) { return MakeError(ErrorKind::kDenied, why); }


// The key that must have made the signature, and the bytes the log recorded as the
// verifier (the certificate's DER, or the key's SPKI).
struct Signer {
  Pkey key;
  std::string verifier_der;
};
Result<Signer> SignerOf(const Bundle& b, const VerifyPolicy& policy) {
  if (policy.key) {
    if (!b.certificates.empty()) {
      return Denied("the bundle is signed with a certificate (keyless); verify it with an identity, not --key");
    }
    return Signer{policy.key, PublicKeyDer(policy.key)};
  }
  if (b.has_public_key || b.certificates.empty()) {
    return Denied("the bundle is signed with a key (hint '" + b.public_key_hint.substr(0, 64) +
                  "'), not a certificate: verify it with --key");
  }
  EVP_PKEY* k = X509_get0_pubkey(b.certificates[0].get());
  if (k == nullptr || EVP_PKEY_up_ref(k) != 1) return Denied("the signing certificate has no usable public key");
  return Signer{Pkey(k, sign::PkeyFree()), CertificateDer(b.certificates[0])};
}

// The bytes a timestamp authority stamped and the log recorded: the signature itself.
std::string SignatureBytes(const Bundle& b) {
  if (b.message_signature) return b.message_signature->signature;
  return b.dsse_envelope->signatures.empty() ? "" : b.dsse_envelope->signatures[0].sig;
}

Status CheckMessage(const MessageSignature& m, const Artifact& a, const Pkey& key) {
  if (!m.digest.empty() && (m.digest_algorithm != "SHA2_256" || m.digest != a.sha256)) {
    return Denied("the bundle's message digest (" + m.digest_algorithm + " " + HexEncode(m.digest) +
                  ") is not the artifact's sha256 " + HexEncode(a.sha256));
  }
  bool ok = EVP_PKEY_is_a(key.get(), "ED25519") ? a.bytes && VerifyMessage(key, *a.bytes, m.signature)
                                                 : VerifyDigest(key, a.sha256, m.signature);
  if (!ok) return Denied("the signature does not verify over the artifact (sha256 " + HexEncode(a.sha256) + ") with the signer's key");
  return Status::Ok();
}

// An in-toto statement in the envelope, one of whose subjects is the artifact.
Status CheckStatementSubject(const DsseEnvelope& e, const Artifact& a) {
  if (e.payload_type != sign::kInTotoPayloadType) {
    return Denied("the DSSE payload is a '" + e.payload_type + "', not an in-toto statement");
  }
  auto j = oci::ParseJson(e.payload, "in-toto statement");
  if (!j.ok()) return Denied(j.error().message);
  const std::string want = HexEncode(a.sha256);
  auto subjects = j->is_object() ? j->find("subject") : j->end();
  if (j->is_object() && subjects != j->end() && subjects->is_array()) {
    for (const auto& s : *subjects) {
      if (s.is_object() && s.contains("digest") && oci::StringMember(s["digest"], "sha256") == want) return Status::Ok();
    }
  }
  return Denied("no subject of the in-toto statement has the artifact's sha256 " + want);
}

Status CheckDsse(const DsseEnvelope& e, const Artifact& a, const Pkey& key) {
  if (e.signatures.size() != 1) {
    return Denied("the DSSE envelope has " + std::to_string(e.signatures.size()) + " signatures; Sigstore bundles have one");
  }
  if (!VerifyMessage(key, sign::Pae(e.payload_type, e.payload), e.signatures[0].sig)) {
    return Denied("the DSSE envelope's signature does not verify with the signer's key");
  }
  return CheckStatementSubject(e, a);
}

// The log key for an entry: its ID in the trusted root, valid at the entry's time.
Result<const LogKey*> LogFor(const TlogEntry& e, const TrustedRoot& root) {
  auto logs = FindLogs(root.tlogs, e.log_id);
  if (logs.empty()) return Denied("log entry " + std::to_string(e.log_index) + " is from a log the trusted root does not name (log ID " + HexEncode(e.log_id) + ")");
  if (!e.integrated_time || *e.integrated_time == 0) return logs[0];
  for (const LogKey* log : logs) {
    if (log->valid_for.Contains(*e.integrated_time)) return log;
  }
  return Denied("the log " + logs[0]->base_url + " was not trusted at the entry's integrated time " +
                FormatRfc3339(*e.integrated_time));
}

// One entry: from a trusted log, consistent with the bundle, and proven by its inclusion
// promise (v0.1) or inclusion proof (v0.2 and later). Adds the integrated time it proves.
Status CheckEntry(const TlogEntry& e, const Bundle& b, const TrustedRoot& root, const Signer& signer,
                  const Artifact& a, Verified* out) {
  auto log = LogFor(e, root);
  if (!log.ok()) return log.error();
  IMGTOOL_TRY(VerifyEntryBody(e, b, signer.verifier_der, a.sha256));
  if (b.minor_version >= 2 && !e.inclusion_proof) {
    return Denied("log entry " + std::to_string(e.log_index) + " has no inclusion proof (a v0." +
                  std::to_string(b.minor_version) + " bundle must carry one)");
  }
  if (b.minor_version == 1 && e.signed_entry_timestamp.empty()) {
    return Denied("log entry " + std::to_string(e.log_index) + " has no inclusion promise (a v0.1 bundle must carry one)");
  }
  if (!e.signed_entry_timestamp.empty()) IMGTOOL_TRY(VerifySignedEntryTimestamp(e, **log));
  if (e.inclusion_proof) IMGTOOL_TRY(VerifyInclusionProof(e, **log));
  std::string where = (*log)->base_url + " #" + std::to_string(e.log_index);
  out->log_entries.push_back(where);
  // Only a time the log signed (the inclusion promise) proves anything; a proof alone does not.
  if (!e.signed_entry_timestamp.empty() && e.integrated_time && *e.integrated_time != 0) {
    out->times.push_back({*e.integrated_time, "rekor integrated time, " + where});
  }
  return Status::Ok();
}

Status CheckTimes(const Bundle& b, const TrustedRoot& root, const Signer& signer, const Artifact& a, Verified* out) {
  if (b.tlog_entries.empty()) return Denied("the bundle has no transparency log entry");
  for (const TlogEntry& e : b.tlog_entries) IMGTOOL_TRY(CheckEntry(e, b, root, signer, a, out));
  for (size_t i = 0; i < b.rfc3161_timestamps.size(); ++i) {
    auto t = VerifyTimestamp(b.rfc3161_timestamps[i], SignatureBytes(b), root);
    if (!t.ok()) return Denied("timestamp " + std::to_string(i) + ": " + t.error().message);
    out->times.push_back({*t, "RFC 3161 timestamp " + std::to_string(i)});
  }
  if (out->times.empty()) {
    return Denied("no verified signing time: no log entry has an integrated time signed by its log (an inclusion "
                  "promise), and there is no timestamp");
  }
  return Status::Ok();
}

// The certificate at every proven signing time: chains to a trusted Fulcio CA, is a
// code-signing leaf, carries a valid SCT, and names the identity asked for.
Status CheckCertificate(const Bundle& b, const TrustedRoot& root, const IdentityPolicy& policy, Verified* out) {
  const Cert& leaf = b.certificates[0];
  IMGTOOL_TRY(CheckLeaf(leaf));
  Cert issuer;
  for (const SignedTime& t : out->times) {
    auto chain = VerifyChain(b.certificates, root, t.time);
    if (!chain.ok()) return Denied("certificate at " + FormatRfc3339(t.time) + " (" + t.source + "): " + chain.error().message);
    issuer = chain->issuer;
  }
  IMGTOOL_TRY(VerifyScts(leaf, issuer, root));
  auto id = ReadIdentity(leaf);
  if (!id.ok()) return Denied(id.error().message);
  IMGTOOL_TRY(MatchIdentity(*id, policy));
  out->signer = id->subject;
  out->issuer = id->issuer;
  return Status::Ok();
}

}  // namespace

Artifact ArtifactOf(std::string_view bytes) { return Artifact{Sha256(bytes), std::string(bytes)}; }

Artifact ArtifactOfDigest(const oci::Digest& digest) {
  // A parsed Digest is 64 lowercase hex digits, so this decodes.
  return Artifact{HexDecode(digest.hex()).value_or(""), std::nullopt};
}

Result<Artifact> ArtifactFromDigest(std::string_view text) {
  auto d = oci::Digest::Parse(text);
  if (!d.ok()) return MakeError(ErrorKind::kInvalidInput, "'" + std::string(text.substr(0, 80)) + "' is not sha256:<64 hex>");
  return ArtifactOfDigest(*d);
}

Result<Verified> VerifyBundle(const Bundle& b, const TrustedRoot& root, const Artifact& a, const VerifyPolicy& policy) {
  if (policy.identity.has_value() == static_cast<bool>(policy.key)) {
    return MakeError(ErrorKind::kInvalidInput, "verify with either an identity (keyless) or a key, not both or neither");
  }
  auto signer = SignerOf(b, policy);
  if (!signer.ok()) return signer.error();
  IMGTOOL_TRY(b.message_signature ? CheckMessage(*b.message_signature, a, signer->key)
                                  : CheckDsse(*b.dsse_envelope, a, signer->key));
  Verified out;
  out.content = b.message_signature ? "message signature" : "DSSE " + b.dsse_envelope->payload_type;
  IMGTOOL_TRY(CheckTimes(b, root, *signer, a, &out));
  if (policy.key) {
    out.signer = "key sha256:" + HexEncode(Sha256(signer->verifier_der));
    return out;
  }
  IMGTOOL_TRY(CheckCertificate(b, root, *policy.identity, &out));
  return out;
}

}  // namespace imgtool::sigstore
