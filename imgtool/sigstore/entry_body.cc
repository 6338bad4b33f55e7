#include "sigstore/entry_body.h"

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "oci/base64.h"
#include "oci/canonical_json.h"
#include "oci/hex.h"
#include "sign_core/dsse.h"
#include "sigstore/json_fields.h"

namespace imgtool::sigstore {

namespace {

constexpr size_t kMaxBodySignatures = 16;   // as many as a bundle's envelope may carry
constexpr size_t kMaxBodyField = 64 << 10;  // a signature, a certificate, its PEM

struct Claim {  // what the bundle says, to hold the body against
  const Bundle& bundle;
  std::string_view verifier_der;
  const ArtifactDigest& artifact;
};

// VerifyEntryBody names the body; a body that cannot be read says nothing the bundle says.
Error Mismatch(const std::string& why) { return MakeError(ErrorKind::kDenied, why); }

// The DER inside PEM text (a certificate or a public key: Rekor v1 stores either).
Result<std::string> PemDer(std::string_view pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> in(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  char *name = nullptr, *header = nullptr;
  unsigned char* data = nullptr;
  long len = 0;
  if (!in || PEM_read_bio(in.get(), &name, &header, &data, &len) != 1) return Mismatch("verifier is not PEM");
  std::string type = name;
  std::string der(reinterpret_cast<char*>(data), static_cast<size_t>(len));
  OPENSSL_free(name);
  OPENSSL_free(header);
  OPENSSL_free(data);
  if (type != "CERTIFICATE" && type != "PUBLIC KEY") return Mismatch("verifier PEM is a " + type);
  return der;
}

// obj[key]: base64 of a PEM certificate or key, which must be the bundle's verifier.
Status SamePemVerifier(const Json& obj, std::string_view key, const std::string& path, const Claim& claim) {
  auto pem = BytesMember(obj, key, path, kMaxBodyField);
  if (!pem.ok()) return pem.error();
  auto der = PemDer(*pem);
  if (!der.ok()) return der.error();
  if (*der != claim.verifier_der) return Mismatch(path + ": logged with another certificate or key");
  return Status::Ok();
}

// {"algorithm":"sha256","value":"<hex>"} (Rekor v1's hash), with `want_alg`'s name.
Status SameHexDigest(const Json& obj, std::string_view key, const std::string& path, HashAlgorithm want_alg,
                     std::string_view want) {
  auto hash = ObjectMember(obj, key, path);
  if (!hash.ok()) return hash.error();
  auto alg = TextMember(**hash, "algorithm", path, true);
  if (!alg.ok()) return alg.error();
  if (*alg != RekorName(want_alg)) {
    return Mismatch(path + ": digest algorithm '" + alg->substr(0, 32) + "', want " + RekorName(want_alg));
  }
  auto value = TextMember(**hash, "value", path, true);
  if (!value.ok()) return value.error();
  if (want.empty() || *value != oci::HexEncode(want)) return Mismatch(path + ": digest differs from the bundle's");
  return Status::Ok();
}

// {"algorithm":"SHA2_256","digest":"<base64>"} (Rekor v2's HashOutput) at obj[key].
Status SameV2Digest(const Json& obj, std::string_view key, const std::string& path, std::string_view alg,
                    std::string_view want) {
  auto hash = ObjectMember(obj, key, path);
  if (!hash.ok()) return hash.error();
  auto got_alg = TextMember(**hash, "algorithm", path, true);
  if (!got_alg.ok()) return got_alg.error();
  if (*got_alg != alg) return Mismatch(path + ": algorithm '" + got_alg->substr(0, 32) + "', want " + std::string(alg));
  auto digest = BytesMember(**hash, "digest", path, 64);
  if (!digest.ok()) return digest.error();
  if (want.empty() || *digest != want) return Mismatch(path + ": digest differs from the bundle's");
  return Status::Ok();
}

// The key of the bundle's verifier (a certificate's, or the key itself).
Result<Pkey> VerifierKey(const Claim& claim) {
  if (claim.bundle.certificates.empty()) return ParsePublicKeyDer(claim.verifier_der, "bundle key");
  auto cert = ParseCertificateDer(claim.verifier_der, "bundle certificate");
  if (!cert.ok()) return cert.error();
  EVP_PKEY* k = X509_get_pubkey(cert->get());
  if (k == nullptr) return Mismatch("bundle certificate has no usable key");
  return Pkey(k, sign::PkeyFree());
}

// Sigstore's name for the key's signature algorithm, the prehashing one Rekor v2 logs.
std::string KeyDetails(const Pkey& key) {
  if (EVP_PKEY_is_a(key.get(), "ED25519")) return "PKIX_ED25519_PH";
  if (EVP_PKEY_is_a(key.get(), "RSA"))
    return "PKIX_RSA_PKCS1V15_" + std::to_string(EVP_PKEY_get_bits(key.get())) + "_SHA256";
  char group[64] = {0};
  size_t len = 0;
  if (EVP_PKEY_get_utf8_string_param(key.get(), OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group), &len) != 1) return "";
  std::string curve = group;
  if (curve == "prime256v1") return "PKIX_ECDSA_P256_SHA_256";
  if (curve == "secp384r1") return "PKIX_ECDSA_P384_SHA_384";
  if (curve == "secp521r1") return "PKIX_ECDSA_P521_SHA_512";
  return "";
}

// The hash a key-details name pairs with (a DSSE envelope logged as hashedrekord).
HashAlgorithm KeyDetailsHash(std::string_view key_details) {
  if (key_details == "PKIX_ECDSA_P384_SHA_384") return HashAlgorithm::kSha384;
  if (key_details == "PKIX_ECDSA_P521_SHA_512" || key_details == "PKIX_ED25519_PH") return HashAlgorithm::kSha512;
  return HashAlgorithm::kSha256;
}

// Rekor v2's Verifier: the bundle's certificate (or key) as rawBytes, and its key details.
// Returns the key details, which name the hash of a DSSE entry's digest.
Result<std::string> SameV2Verifier(const Json& obj, const std::string& path, const Claim& claim) {
  auto verifier = ObjectMember(obj, "verifier", path);
  if (!verifier.ok()) return verifier.error();
  const char* holder = claim.bundle.certificates.empty() ? "publicKey" : "x509Certificate";
  auto raw = ObjectMember(**verifier, holder, path + ".verifier");
  if (!raw.ok()) return raw.error();
  auto der = BytesMember(**raw, "rawBytes", path + ".verifier." + holder, kMaxBodyField);
  if (!der.ok()) return der.error();
  if (*der != claim.verifier_der) return Mismatch(path + ".verifier: logged with another certificate or key");
  auto details = TextMember(**verifier, "keyDetails", path + ".verifier", true);
  if (!details.ok()) return details.error();
  auto key = VerifierKey(claim);
  if (!key.ok()) return key.error();
  if (*details != KeyDetails(*key))
    return Mismatch(path + ".verifier: key details '" + details->substr(0, 64) + "' are not the key's");
  return std::move(*details);
}

// The logged signatures (raw) and the envelope's are the same set.
Status SameSignatureSet(std::vector<std::string> logged, const DsseEnvelope& envelope, const std::string& path) {
  std::vector<std::string> ours;
  for (const DsseSignature& s : envelope.signatures) ours.push_back(s.sig);
  std::sort(logged.begin(), logged.end());
  std::sort(ours.begin(), ours.end());
  if (logged != ours) return Mismatch(path + ": the signatures are not the envelope's");
  return Status::Ok();
}

Status HashedRekordV001(const Json& spec, const Claim& claim) {
  const MessageSignature& msg = *claim.bundle.message_signature;
  auto signature = ObjectMember(spec, "signature", "spec");
  if (!signature.ok()) return signature.error();
  auto content = BytesMember(**signature, "content", "spec.signature", kMaxBodyField);
  if (!content.ok()) return content.error();
  if (*content != msg.signature) return Mismatch("spec.signature: not the bundle's signature");
  auto key = ObjectMember(**signature, "publicKey", "spec.signature");
  if (!key.ok()) return key.error();
  IMGTOOL_TRY(SamePemVerifier(**key, "content", "spec.signature.publicKey", claim));
  auto data = ObjectMember(spec, "data", "spec");
  if (!data.ok()) return data.error();
  return SameHexDigest(**data, "hash", "spec.data.hash", claim.artifact.alg, claim.artifact.digest);
}

// Rekor v2 logs a message signature over the artifact's digest, or a DSSE envelope's only
// signature over PAE(payloadType, payload), hashed as the key details say.
Status HashedRekordV002(const Json& spec, const Claim& claim) {
  auto v2 = ObjectMember(spec, "hashedRekordV002", "spec");
  if (!v2.ok()) return v2.error();
  auto signature = ObjectMember(**v2, "signature", "spec.hashedRekordV002");
  if (!signature.ok()) return signature.error();
  const std::string path = "spec.hashedRekordV002.signature";
  auto content = BytesMember(**signature, "content", path, kMaxBodyField);
  if (!content.ok()) return content.error();
  auto details = SameV2Verifier(**signature, path, claim);
  if (!details.ok()) return details.error();
  if (claim.bundle.message_signature) {
    if (*content != claim.bundle.message_signature->signature) return Mismatch(path + ": not the bundle's signature");
    return SameV2Digest(**v2, "data", "spec.hashedRekordV002.data", ProtobufName(claim.artifact.alg),
                        claim.artifact.digest);
  }
  const DsseEnvelope& env = *claim.bundle.dsse_envelope;
  if (env.signatures.size() != 1) return Mismatch("a DSSE envelope logged as hashedrekord must have one signature");
  if (*content != env.signatures[0].sig) return Mismatch(path + ": not the envelope's signature");
  HashAlgorithm alg = KeyDetailsHash(*details);
  return SameV2Digest(**v2, "data", "spec.hashedRekordV002.data", ProtobufName(alg),
                      HashOf(alg, sign::Pae(env.payload_type, env.payload)));
}

Status DsseV001(const Json& spec, const Claim& claim) {
  const DsseEnvelope& env = *claim.bundle.dsse_envelope;
  IMGTOOL_TRY(SameHexDigest(spec, "payloadHash", "spec.payloadHash", HashAlgorithm::kSha256, Sha256(env.payload)));
  auto sigs = ArrayMember(spec, "signatures", "spec", kMaxBodySignatures);
  if (!sigs.ok()) return sigs.error();
  std::vector<std::string> logged;
  for (const Json& s : **sigs) {
    IMGTOOL_TRY(SamePemVerifier(s, "verifier", "spec.signatures[]", claim));
    auto sig = BytesMember(s, "signature", "spec.signatures[]", kMaxBodyField);
    if (!sig.ok()) return sig.error();
    logged.push_back(std::move(*sig));
  }
  return SameSignatureSet(std::move(logged), env, "spec.signatures");
}

Status DsseV002(const Json& spec, const Claim& claim) {
  const DsseEnvelope& env = *claim.bundle.dsse_envelope;
  auto v2 = ObjectMember(spec, "dsseV002", "spec");
  if (!v2.ok()) return v2.error();
  IMGTOOL_TRY(SameV2Digest(**v2, "payloadHash", "spec.dsseV002.payloadHash", "SHA2_256", Sha256(env.payload)));
  auto sigs = ArrayMember(**v2, "signatures", "spec.dsseV002", kMaxBodySignatures);
  if (!sigs.ok()) return sigs.error();
  std::vector<std::string> logged;
  for (const Json& s : **sigs) {
    auto details = SameV2Verifier(s, "spec.dsseV002.signatures[]", claim);
    if (!details.ok()) return details.error();
    auto sig = BytesMember(s, "content", "spec.dsseV002.signatures[]", kMaxBodyField);
    if (!sig.ok()) return sig.error();
    logged.push_back(std::move(*sig));
  }
  return SameSignatureSet(std::move(logged), env, "spec.dsseV002.signatures");
}

// obj[key] is base64 of base64 (Rekor's intoto type encodes the envelope's bytes twice).
Result<std::string> TwiceBase64(const Json& obj, std::string_view key, const std::string& path) {
  auto once = BytesMember(obj, key, path, kMaxBundle);
  if (!once.ok()) return once.error();
  return oci::Base64Decode(*once, path + "." + std::string(key));
}

Status IntotoV002(const Json& spec, const Claim& claim) {
  const DsseEnvelope& env = *claim.bundle.dsse_envelope;
  auto content = ObjectMember(spec, "content", "spec");
  if (!content.ok()) return content.error();
  IMGTOOL_TRY(
      SameHexDigest(**content, "payloadHash", "spec.content.payloadHash", HashAlgorithm::kSha256, Sha256(env.payload)));
  auto logged_env = ObjectMember(**content, "envelope", "spec.content");
  if (!logged_env.ok()) return logged_env.error();
  const std::string path = "spec.content.envelope";
  auto type = TextMember(**logged_env, "payloadType", path, true);
  if (!type.ok()) return type.error();
  if (*type != env.payload_type) return Mismatch(path + ".payloadType: not the envelope's");
  if (logged_env.value()->contains("payload")) {
    auto payload = TwiceBase64(**logged_env, "payload", path);
    if (!payload.ok()) return payload.error();
    if (*payload != env.payload) return Mismatch(path + ".payload: not the envelope's");
  }
  auto sigs = ArrayMember(**logged_env, "signatures", path, kMaxBodySignatures);
  if (!sigs.ok()) return sigs.error();
  std::vector<std::string> logged;
  for (const Json& s : **sigs) {
    IMGTOOL_TRY(SamePemVerifier(s, "publicKey", path + ".signatures[]", claim));
    auto sig = TwiceBase64(s, "sig", path + ".signatures[]");
    if (!sig.ok()) return sig.error();
    logged.push_back(std::move(*sig));
  }
  return SameSignatureSet(std::move(logged), env, path + ".signatures");
}

using KindCheck = Status (*)(const Json&, const Claim&);

// The check for a kind and version, and whether it takes a message signature (else DSSE).
struct Kind {
  std::string_view kind, version;
  bool message, dsse;
  KindCheck check;
};
constexpr Kind kKinds[] = {
    {"hashedrekord", "0.0.1", true, false, HashedRekordV001},
    {"hashedrekord", "0.0.2", true, true, HashedRekordV002},
    {"dsse", "0.0.1", false, true, DsseV001},
    {"dsse", "0.0.2", false, true, DsseV002},
    {"intoto", "0.0.2", false, true, IntotoV002},
};

Status CheckBody(const TlogEntry& entry, const Claim& claim) {
  auto body = oci::ParseJson(entry.canonicalized_body, "body");
  if (!body.ok()) return body.error();
  if (oci::StringMember(*body, "kind") != entry.kind || oci::StringMember(*body, "apiVersion") != entry.kind_version) {
    return Mismatch("kind and apiVersion are not the entry's kindVersion");
  }
  auto spec = ObjectMember(*body, "spec", "body");
  if (!spec.ok()) return spec.error();
  for (const Kind& k : kKinds) {
    if (k.kind != entry.kind || k.version != entry.kind_version) continue;
    if (claim.bundle.message_signature ? !k.message : !(k.dsse && claim.bundle.dsse_envelope)) {
      return Mismatch(entry.kind + " " + entry.kind_version + " does not log this kind of bundle content");
    }
    return k.check(**spec, claim);
  }
  return Mismatch("unsupported kind " + entry.kind.substr(0, 32) + " " + entry.kind_version.substr(0, 16));
}

}  // namespace

Status VerifyEntryBody(const TlogEntry& entry, const Bundle& bundle, std::string_view verifier_der,
                       const ArtifactDigest& artifact) {
  Status st = CheckBody(entry, Claim{bundle, verifier_der, artifact});
  if (!st.ok()) return MakeError(ErrorKind::kDenied, "tlog entry body: " + st.error().message);
  return Status::Ok();
}

Result<std::optional<HashAlgorithm>> LoggedMessageHash(const TlogEntry& entry) {
  if (entry.kind != "hashedrekord") return std::optional<HashAlgorithm>();
  auto body = oci::ParseJson(entry.canonicalized_body, "body");
  if (!body.ok() || !body->is_object() || !body->contains("spec") || !(*body)["spec"].is_object()) {
    return std::optional<HashAlgorithm>();
  }
  const Json& spec = (*body)["spec"];
  // 0.0.1: spec.data.hash.algorithm ("sha256"); 0.0.2: spec.hashedRekordV002.data.algorithm ("SHA2_256").
  bool v1 = entry.kind_version == "0.0.1";
  const Json* holder = v1 ? (spec.contains("data") ? &spec["data"] : nullptr)
                          : (spec.contains("hashedRekordV002") ? &spec["hashedRekordV002"] : nullptr);
  const char* member = v1 ? "hash" : "data";
  if (holder == nullptr || !holder->is_object() || !holder->contains(member) || !(*holder)[member].is_object()) {
    return std::optional<HashAlgorithm>();
  }
  std::string name = oci::StringMember((*holder)[member], "algorithm");
  auto alg = v1 ? HashFromRekorName(name) : HashFromProtobufName(name);
  if (!alg) {
    return MakeError(ErrorKind::kDenied, "log entry " + std::to_string(entry.log_index) + ": hash algorithm '" +
                                             name.substr(0, 32) + "' is not sha256, sha384 or sha512");
  }
  return std::optional<HashAlgorithm>(*alg);
}

}  // namespace imgtool::sigstore
