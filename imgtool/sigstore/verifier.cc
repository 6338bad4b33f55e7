#include "sigstore/verifier.h"

#include <openssl/x509.h>

#include <algorithm>

#include "oci/canonical_json.h"
#include "oci/digest.h"
#include "oci/hex.h"
#include "sign_core/dsse.h"
#include "sigstore/entry_body.h"
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

// The hash the message signature was made over, as the bundle and its log entries say
// (they must agree); sha256 when none names one.
Result<HashAlgorithm> SignedHash(const Bundle& b) {
  const MessageSignature& m = *b.message_signature;
  std::optional<HashAlgorithm> alg;
  if (!m.digest.empty() || !m.digest_algorithm.empty()) {
    alg = HashFromProtobufName(m.digest_algorithm);
    if (!alg) {
      return Denied("the bundle's message digest algorithm '" + m.digest_algorithm.substr(0, 32) +
                    "' is not SHA2_256, SHA2_384 or SHA2_512");
    }
  }
  for (const TlogEntry& e : b.tlog_entries) {
    auto logged = LoggedMessageHash(e);
    if (!logged.ok()) return logged.error();
    if (!*logged) continue;
    if (alg && *alg != **logged) {
      return Denied("log entry " + std::to_string(e.log_index) + " names " + ProtobufName(**logged) +
                    " but the bundle's signature is over " + ProtobufName(*alg));
    }
    alg = *logged;
  }
  return alg.value_or(HashAlgorithm::kSha256);
}

// The signature over the artifact's digest (under the hash the bundle names), which is
// also the bundle's messageDigest when it gives one. Returns that digest for the log
// entries to name.
Result<ArtifactDigest> CheckMessage(const Bundle& b, const Artifact& a, const Pkey& key) {
  const MessageSignature& m = *b.message_signature;
  auto alg = SignedHash(b);
  if (!alg.ok()) return alg.error();
  auto digest = DigestOf(a, *alg);
  if (!digest.ok()) return digest.error();
  const std::string what = "the artifact's " + RekorName(*alg) + " " + oci::HexEncode(*digest);
  if (!m.digest.empty() && m.digest != *digest) {
    return Denied("the bundle's message digest (" + m.digest_algorithm + " " + oci::HexEncode(m.digest) + ") is not " +
                  what);
  }
  bool ok = EVP_PKEY_is_a(key.get(), "ED25519") ? a.bytes && VerifyMessage(key, *a.bytes, m.signature)
                                                : VerifyDigest(key, *alg, *digest, m.signature);
  if (!ok) return Denied("the signature does not verify over " + what + " with the signer's key");
  return ArtifactDigest{*alg, *digest};
}

// An in-toto statement in the envelope, one of whose subjects is the artifact.
Status CheckStatementSubject(const DsseEnvelope& e, const Artifact& a) {
  if (e.payload_type != sign::kInTotoPayloadType) {
    return Denied("the DSSE payload is a '" + e.payload_type + "', not an in-toto statement");
  }
  auto j = oci::ParseJson(e.payload, "in-toto statement");
  if (!j.ok()) return Denied(j.error().message);
  const std::string want = oci::HexEncode(a.sha256);
  auto subjects = j->is_object() ? j->find("subject") : j->end();
  if (j->is_object() && subjects != j->end() && subjects->is_array()) {
    for (const auto& s : *subjects) {
      if (s.is_object() && s.contains("digest") && oci::StringMember(s["digest"], "sha256") == want)
        return Status::Ok();
    }
  }
  return Denied("no subject of the in-toto statement has the artifact's sha256 " + want);
}

Status CheckDsse(const DsseEnvelope& e, const Artifact& a, const Pkey& key) {
  if (e.signatures.size() != 1) {
    return Denied("the DSSE envelope has " + std::to_string(e.signatures.size()) +
                  " signatures; Sigstore bundles have one");
  }
  if (!VerifyMessage(key, sign::Pae(e.payload_type, e.payload), e.signatures[0].sig)) {
    return Denied("the DSSE envelope's signature does not verify with the signer's key");
  }
  return CheckStatementSubject(e, a);
}

// The log key for an entry: its ID in the trusted root, valid at the entry's time.
Result<const LogKey*> LogFor(const TlogEntry& e, const TrustedRoot& root) {
  auto logs = FindLogs(root.tlogs, e.log_id);
  if (logs.empty())
    return Denied("log entry " + std::to_string(e.log_index) +
                  " is from a log the trusted root does not name (log ID " + oci::HexEncode(e.log_id) + ")");
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
                  const ArtifactDigest& signed_digest, Verified* out) {
  auto log = LogFor(e, root);
  if (!log.ok()) return log.error();
  IMGTOOL_TRY(VerifyEntryBody(e, b, signer.verifier_der, signed_digest));
  if (b.minor_version >= 2 && !e.inclusion_proof) {
    return Denied("log entry " + std::to_string(e.log_index) + " has no inclusion proof (a v0." +
                  std::to_string(b.minor_version) + " bundle must carry one)");
  }
  if (b.minor_version == 1 && e.signed_entry_timestamp.empty()) {
    return Denied("log entry " + std::to_string(e.log_index) +
                  " has no inclusion promise (a v0.1 bundle must carry one)");
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

// One entry listed twice would prove its time twice (sigstore-go refuses it too).
Status RefuseRepeatedEntries(const Bundle& b) {
  for (size_t i = 0; i < b.tlog_entries.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      const TlogEntry &x = b.tlog_entries[i], &y = b.tlog_entries[j];
      if (x.log_id == y.log_id && x.log_index == y.log_index) {
        return Denied("log entry " + std::to_string(x.log_index) + " is listed twice");
      }
    }
  }
  return Status::Ok();
}

// Every log entry must verify; the RFC 3161 timestamps that verify join the entries'
// integrated times, and the policy's thresholds are checked on them (signed_times.h).
Status CheckTimes(const Bundle& b, const TrustedRoot& root, const Signer& signer, const ArtifactDigest& signed_digest,
                  const TimePolicy& policy, Verified* out) {
  if (b.tlog_entries.empty()) return Denied("the bundle has no transparency log entry");
  IMGTOOL_TRY(RefuseRepeatedEntries(b));
  for (const TlogEntry& e : b.tlog_entries) IMGTOOL_TRY(CheckEntry(e, b, root, signer, signed_digest, out));
  size_t integrated = out->times.size();
  auto stamps = VerifyTimestamps(b.rfc3161_timestamps, SignatureBytes(b), root, policy.strict);
  if (!stamps.ok()) return stamps.error();
  for (const StampedTime& t : stamps->verified) {
    out->times.push_back({t.time, "RFC 3161 timestamp " + std::to_string(t.index)});
  }
  return CheckTimeThresholds(integrated, *stamps, policy);
}

// The certificate at every proven signing time: chains to a trusted Fulcio CA, is a
// code-signing leaf, carries a valid SCT, and names the identity asked for.
Status CheckCertificate(const Bundle& b, const TrustedRoot& root, const IdentityPolicy& policy, Verified* out) {
  const Cert& leaf = b.certificates[0];
  IMGTOOL_TRY(CheckLeaf(leaf));
  Cert issuer;
  for (const SignedTime& t : out->times) {
    auto chain = VerifyChain(b.certificates, root, t.time);
    if (!chain.ok())
      return Denied("certificate at " + FormatRfc3339(t.time) + " (" + t.source + "): " + chain.error().message);
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

Artifact ArtifactOf(std::string_view bytes) { return Artifact{Sha256(bytes), std::string(bytes), {}}; }

Artifact ArtifactOfDigest(const oci::Digest& digest) {
  // A parsed Digest is 64 lowercase hex digits, so this decodes.
  return Artifact{oci::HexDecode(digest.hex()).value_or(""), std::nullopt, {}};
}

Result<std::string> DigestOf(const Artifact& a, HashAlgorithm alg) {
  if (alg == HashAlgorithm::kSha256) return a.sha256;
  for (const ArtifactDigest& d : a.more) {
    if (d.alg == alg) return d.digest;
  }
  if (a.bytes) return HashOf(alg, *a.bytes);
  return Denied("the bundle signs the artifact's " + RekorName(alg) + ", and only its sha256 is known");
}

std::vector<HashAlgorithm> MessageHashes(const Bundle& b) {
  std::vector<HashAlgorithm> out;
  if (!b.message_signature) return out;
  auto add = [&](std::optional<HashAlgorithm> alg) {
    if (alg && *alg != HashAlgorithm::kSha256 && std::find(out.begin(), out.end(), *alg) == out.end())
      out.push_back(*alg);
  };
  add(HashFromProtobufName(b.message_signature->digest_algorithm));
  for (const TlogEntry& e : b.tlog_entries) {
    auto logged = LoggedMessageHash(e);
    if (logged.ok()) add(*logged);
  }
  return out;
}

Result<Artifact> ArtifactFromDigest(std::string_view text) {
  auto d = oci::Digest::Parse(text);
  if (!d.ok())
    return MakeError(ErrorKind::kInvalidInput, "'" + std::string(text.substr(0, 80)) + "' is not sha256:<64 hex>");
  return ArtifactOfDigest(*d);
}

Result<Verified> VerifyBundle(const Bundle& b, const TrustedRoot& root, const Artifact& a, const VerifyPolicy& policy) {
  if (policy.identity.has_value() == static_cast<bool>(policy.key)) {
    return MakeError(ErrorKind::kInvalidInput,
                     "verify with either an identity (keyless) or a key, not both or neither");
  }
  IMGTOOL_TRY(ValidateTimePolicy(policy.times));
  auto signer = SignerOf(b, policy);
  if (!signer.ok()) return signer.error();
  ArtifactDigest signed_digest;  // what a message signature signed; DSSE entries name the envelope instead
  if (b.message_signature) {
    auto d = CheckMessage(b, a, signer->key);
    if (!d.ok()) return d.error();
    signed_digest = std::move(*d);
  } else {
    IMGTOOL_TRY(CheckDsse(*b.dsse_envelope, a, signer->key));
  }
  Verified out;
  out.content = b.message_signature ? "message signature" : "DSSE " + b.dsse_envelope->payload_type;
  IMGTOOL_TRY(CheckTimes(b, root, *signer, signed_digest, policy.times, &out));
  if (policy.key) {
    out.signer = "key sha256:" + oci::HexEncode(Sha256(signer->verifier_der));
    return out;
  }
  IMGTOOL_TRY(CheckCertificate(b, root, *policy.identity, &out));
  return out;
}

}  // namespace imgtool::sigstore
