#include "sigstore/bundle.h"

#include "sigstore/json_fields.h"

namespace imgtool::sigstore {

namespace {

constexpr size_t kMaxCertificates = 8;
constexpr size_t kMaxEntries = 16;       // tlog entries, DSSE signatures
constexpr size_t kMaxProofHashes = 64;   // a tree of 2^64 leaves needs 64
constexpr size_t kMaxDer = 64 << 10;     // a certificate, an SCT-carrying leaf, a timestamp
constexpr size_t kMaxBody = kMaxBundle;  // a log entry's body, a DSSE payload: bounded by the bundle

Result<int> MinorVersion(const std::string& media_type, const std::string& what) {
  static const struct {
    std::string_view type;
    int minor;
  } kKnown[] = {
      {"application/vnd.dev.sigstore.bundle+json;version=0.1", 1},
      {"application/vnd.dev.sigstore.bundle+json;version=0.2", 2},
      {"application/vnd.dev.sigstore.bundle+json;version=0.3", 3},
      {"application/vnd.dev.sigstore.bundle.v0.3+json", 3},
  };
  for (const auto& k : kKnown) {
    if (media_type == k.type) return k.minor;
  }
  return MakeError(ErrorKind::kInvalidInput, what + ": mediaType '" + media_type.substr(0, 100) +
                                                 "' is not a Sigstore bundle version imgtool knows (0.1, 0.2, 0.3)");
}

Status ParseCertificates(const Json& material, const std::string& path, Bundle* b) {
  auto one = [&](const Json& holder, const std::string& at) -> Status {
    auto der = BytesMember(holder, "rawBytes", at, kMaxDer);
    if (!der.ok()) return der.error();
    auto cert = ParseCertificateDer(*der, at);
    if (!cert.ok()) return cert.error();
    b->certificates.push_back(*cert);
    return Status::Ok();
  };
  if (material.contains("certificate")) {
    auto cert = ObjectMember(material, "certificate", path);
    if (!cert.ok()) return cert.error();
    return one(**cert, path + ".certificate");
  }
  auto chain = ObjectMember(material, "x509CertificateChain", path);
  if (!chain.ok()) return chain.error();
  auto certs = ArrayMember(**chain, "certificates", path + ".x509CertificateChain", kMaxCertificates);
  if (!certs.ok()) return certs.error();
  if ((*certs)->empty()) {
    return MakeError(ErrorKind::kInvalidInput, path + ".x509CertificateChain: no certificates");
  }
  for (size_t i = 0; i < (*certs)->size(); ++i) {
    IMGTOOL_TRY(one((**certs)[i], path + ".x509CertificateChain.certificates[" + std::to_string(i) + "]"));
  }
  return Status::Ok();
}

Result<InclusionProof> ParseProof(const Json& obj, const std::string& path) {
  InclusionProof p;
  auto index = Int64Member(obj, "logIndex", path);
  if (!index.ok()) return index.error();
  auto size = Int64Member(obj, "treeSize", path);
  if (!size.ok()) return size.error();
  p.log_index = *index;
  p.tree_size = *size;
  auto root = BytesMember(obj, "rootHash", path, 64);
  if (!root.ok()) return root.error();
  p.root_hash = *root;
  auto hashes = ArrayMember(obj, "hashes", path, kMaxProofHashes);
  if (!hashes.ok()) return hashes.error();
  for (const Json& h : **hashes) {
    if (!h.is_string()) return MakeError(ErrorKind::kInvalidInput, path + ".hashes: not a string");
    auto bytes = BytesMember(Json{{"h", h}}, "h", path + ".hashes[]", 64);
    if (!bytes.ok()) return bytes.error();
    p.hashes.push_back(*bytes);
  }
  if (!obj.contains("checkpoint")) return p;  // old v0.1 bundles: the verifier decides
  auto checkpoint = ObjectMember(obj, "checkpoint", path);
  if (!checkpoint.ok()) return checkpoint.error();
  auto envelope = TextMember(**checkpoint, "envelope", path + ".checkpoint", true);
  if (!envelope.ok()) return envelope.error();
  if (envelope->size() > kMaxDer) return MakeError(ErrorKind::kInvalidInput, path + ".checkpoint: too long");
  p.checkpoint = *envelope;
  return p;
}

Result<TlogEntry> ParseEntry(const Json& obj, const std::string& path) {
  TlogEntry e;
  auto index = Int64Member(obj, "logIndex", path);
  if (!index.ok()) return index.error();
  e.log_index = *index;
  auto id = ObjectMember(obj, "logId", path);
  if (!id.ok()) return id.error();
  auto key_id = BytesMember(**id, "keyId", path + ".logId", 64);
  if (!key_id.ok()) return key_id.error();
  e.log_id = *key_id;
  auto kv = ObjectMember(obj, "kindVersion", path);
  if (!kv.ok()) return kv.error();
  auto kind = TextMember(**kv, "kind", path + ".kindVersion", true);
  if (!kind.ok()) return kind.error();
  auto version = TextMember(**kv, "version", path + ".kindVersion", true);
  if (!version.ok()) return version.error();
  e.kind = *kind;
  e.kind_version = *version;
  if (obj.contains("integratedTime")) {
    auto t = Int64Member(obj, "integratedTime", path);
    if (!t.ok()) return t.error();
    e.integrated_time = *t;
  }
  if (obj.contains("inclusionPromise")) {
    auto promise = ObjectMember(obj, "inclusionPromise", path);
    if (!promise.ok()) return promise.error();
    auto set = BytesMember(**promise, "signedEntryTimestamp", path + ".inclusionPromise", kMaxDer);
    if (!set.ok()) return set.error();
    e.signed_entry_timestamp = *set;
  }
  if (obj.contains("inclusionProof")) {
    auto proof_obj = ObjectMember(obj, "inclusionProof", path);
    if (!proof_obj.ok()) return proof_obj.error();
    auto proof = ParseProof(**proof_obj, path + ".inclusionProof");
    if (!proof.ok()) return proof.error();
    e.inclusion_proof = std::move(*proof);
  }
  auto body = BytesMember(obj, "canonicalizedBody", path, kMaxBody);
  if (!body.ok()) return body.error();
  e.canonicalized_body = *body;
  return e;
}

Status ParseMaterial(const Json& doc, const std::string& what, Bundle* b) {
  std::string path = what + ": verificationMaterial";
  auto material = ObjectMember(doc, "verificationMaterial", what + ": bundle");
  if (!material.ok()) return material.error();
  if ((*material)->contains("publicKey")) {
    auto key = ObjectMember(**material, "publicKey", path);
    if (!key.ok()) return key.error();
    auto hint = TextMember(**key, "hint", path + ".publicKey", false);
    if (!hint.ok()) return hint.error();
    b->has_public_key = true;
    b->public_key_hint = *hint;
  } else {
    IMGTOOL_TRY(ParseCertificates(**material, path, b));
  }
  auto entries = ArrayMember(**material, "tlogEntries", path, kMaxEntries);
  if (!entries.ok()) return entries.error();
  for (size_t i = 0; i < (*entries)->size(); ++i) {
    auto e = ParseEntry((**entries)[i], path + ".tlogEntries[" + std::to_string(i) + "]");
    if (!e.ok()) return e.error();
    b->tlog_entries.push_back(std::move(*e));
  }
  if (!(*material)->contains("timestampVerificationData")) return Status::Ok();
  auto tsv = ObjectMember(**material, "timestampVerificationData", path);
  if (!tsv.ok()) return tsv.error();
  auto stamps = ArrayMember(**tsv, "rfc3161Timestamps", path + ".timestampVerificationData", kMaxTimestamps);
  if (!stamps.ok()) return stamps.error();
  for (size_t i = 0; i < (*stamps)->size(); ++i) {
    auto der = BytesMember((**stamps)[i], "signedTimestamp",
                           path + ".timestampVerificationData.rfc3161Timestamps[" + std::to_string(i) + "]", kMaxDer);
    if (!der.ok()) return der.error();
    b->rfc3161_timestamps.push_back(*der);
  }
  return Status::Ok();
}

Result<MessageSignature> ParseMessageSignature(const Json& obj, const std::string& path) {
  MessageSignature m;
  if (obj.contains("messageDigest")) {
    auto digest = ObjectMember(obj, "messageDigest", path);
    if (!digest.ok()) return digest.error();
    auto algorithm = TextMember(**digest, "algorithm", path + ".messageDigest", true);
    if (!algorithm.ok()) return algorithm.error();
    auto bytes = BytesMember(**digest, "digest", path + ".messageDigest", 64);
    if (!bytes.ok()) return bytes.error();
    m.digest_algorithm = *algorithm;
    m.digest = *bytes;
  }
  auto sig = BytesMember(obj, "signature", path, kMaxDer);
  if (!sig.ok()) return sig.error();
  m.signature = *sig;
  return m;
}

Result<DsseEnvelope> ParseDsse(const Json& obj, const std::string& path) {
  DsseEnvelope d;
  auto type = TextMember(obj, "payloadType", path, true);
  if (!type.ok()) return type.error();
  d.payload_type = *type;
  auto payload = BytesMember(obj, "payload", path, kMaxBody);
  if (!payload.ok()) return payload.error();
  d.payload = *payload;
  auto sigs = ArrayMember(obj, "signatures", path, kMaxEntries);
  if (!sigs.ok()) return sigs.error();
  if ((*sigs)->empty()) return MakeError(ErrorKind::kInvalidInput, path + ".signatures: none");
  for (size_t i = 0; i < (*sigs)->size(); ++i) {
    std::string at = path + ".signatures[" + std::to_string(i) + "]";
    auto sig = BytesMember((**sigs)[i], "sig", at, kMaxDer);
    if (!sig.ok()) return sig.error();
    auto keyid = TextMember((**sigs)[i], "keyid", at, false);
    if (!keyid.ok()) return keyid.error();
    d.signatures.push_back({*keyid, *sig});
  }
  return d;
}

}  // namespace

Result<DsseEnvelope> ParseDsseEnvelope(std::string_view json, const std::string& what) {
  auto doc = ParseObjectDocument(json, kMaxBundle, what);
  if (!doc.ok()) return doc.error();
  return ParseDsse(*doc, what);
}

Result<Bundle> ParseBundle(std::string_view json, const std::string& what) {
  auto doc = ParseObjectDocument(json, kMaxBundle, what);
  if (!doc.ok()) return doc.error();
  Bundle b;
  auto media_type = TextMember(*doc, "mediaType", what + ": bundle", true);
  if (!media_type.ok()) return media_type.error();
  b.media_type = *media_type;
  auto minor = MinorVersion(b.media_type, what);
  if (!minor.ok()) return minor.error();
  b.minor_version = *minor;
  IMGTOOL_TRY(ParseMaterial(*doc, what, &b));
  bool message = doc->contains("messageSignature"), dsse = doc->contains("dsseEnvelope");
  if (message == dsse) {
    return MakeError(ErrorKind::kInvalidInput,
                     what + ": a bundle holds exactly one of messageSignature and dsseEnvelope");
  }
  const std::string path = what + ": " + (message ? "messageSignature" : "dsseEnvelope");
  auto content = ObjectMember(*doc, message ? "messageSignature" : "dsseEnvelope", what + ": bundle");
  if (!content.ok()) return content.error();
  if (message) {
    auto m = ParseMessageSignature(**content, path);
    if (!m.ok()) return m.error();
    b.message_signature = std::move(*m);
  } else {
    auto d = ParseDsse(**content, path);
    if (!d.ok()) return d.error();
    b.dsse_envelope = std::move(*d);
  }
  return b;
}

}  // namespace imgtool::sigstore
