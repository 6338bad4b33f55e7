#include "sign_core/dsse.h"

#include <algorithm>

#include "oci/base64.h"
#include "oci/canonical_json.h"
#include "sign_core/keys.h"

namespace imgtool::sign {

namespace {

struct Envelope {
  std::string payload_type;
  std::string payload;
  std::vector<std::string> signatures;  // DER
};

Result<Envelope> ParseEnvelope(std::string_view bytes) {
  auto j = oci::ParseJson(bytes, "DSSE envelope");
  if (!j.ok()) return j.error();
  auto bad = [](const std::string& why) { return MakeError(ErrorKind::kDenied, "DSSE envelope: " + why); };
  if (!j->is_object() || !(*j)["payloadType"].is_string() || !(*j)["payload"].is_string() ||
      !(*j)["signatures"].is_array()) {
    return bad("want payloadType, payload and signatures");
  }
  Envelope e;
  e.payload_type = (*j)["payloadType"].get<std::string>();
  auto payload = oci::Base64Decode((*j)["payload"].get<std::string>(), "DSSE envelope: payload");
  if (!payload.ok()) return bad("payload is not base64");
  e.payload = *payload;
  for (const auto& s : (*j)["signatures"]) {
    if (!s.is_object() || !s.contains("sig") || !s["sig"].is_string()) return bad("a signature without sig");
    auto der = oci::Base64Decode(s["sig"].get<std::string>(), "sig");
    if (!der.ok()) return bad("sig is not base64");
    e.signatures.push_back(*der);
  }
  return e;
}

// The statement's claims: in-toto v0.1 (cosign attest) or v1 (SLSA provenance, GitHub's
// attestations: the same subject and predicateType members), a subject with this image's
// sha256, the type.
Status CheckStatement(std::string_view statement, const oci::Digest& image, const std::string& predicate_type) {
  auto j = oci::ParseJson(statement, "in-toto statement");
  if (!j.ok()) return MakeError(ErrorKind::kDenied, j.error().message);
  // Members by type (StringMember): a signed statement is still the signer's text, not ours.
  std::string type = j->is_object() ? oci::StringMember(*j, "_type") : "";
  if (type != kInTotoStatementType && type != kInTotoStatementV1Type) {
    return MakeError(ErrorKind::kDenied, "statement _type is not " + std::string(kInTotoStatementType) + " or " +
                                             std::string(kInTotoStatementV1Type));
  }
  std::string got_type = oci::StringMember(*j, "predicateType");
  if (!predicate_type.empty() && got_type != predicate_type) {
    return MakeError(ErrorKind::kDenied, "predicateType is '" + got_type + "', want '" + predicate_type + "'");
  }
  auto subjects = j->find("subject");
  if (subjects != j->end() && subjects->is_array()) {
    for (const auto& s : *subjects) {
      if (s.is_object() && s.contains("digest") && oci::StringMember(s["digest"], "sha256") == image.hex()) {
        return Status::Ok();
      }
    }
  }
  return MakeError(ErrorKind::kDenied, "no subject names this image " + image.str() +
                                           " (the tag moved after attesting, or the attestation is another image's)");
}

SignatureCheck CheckLayer(const SignatureLayer& l, const oci::Digest& image, const std::vector<TrustedKey>& keys,
                          const std::string& predicate_type) {
  SignatureCheck c;
  c.layer = l.descriptor.digest;
  if (l.descriptor.media_type != kDsseMediaType) {
    c.reason = "layer is a " + l.descriptor.media_type + ", not a DSSE envelope";
    return c;
  }
  oci::Digest actual = oci::Digest::Of(l.payload);
  if (actual != l.descriptor.digest) {
    c.reason = "envelope altered: it hashes to " + actual.str() + ", the manifest names " + l.descriptor.digest.str();
    return c;
  }
  auto e = ParseEnvelope(l.payload);
  if (!e.ok()) {
    c.reason = e.error().message;
    return c;
  }
  if (e->payload_type != kInTotoPayloadType) {
    c.reason = "payloadType is '" + e->payload_type + "', want '" + std::string(kInTotoPayloadType) + "'";
    return c;
  }
  std::string pae = Pae(e->payload_type, e->payload);
  c.reason = "envelope has no signatures";
  for (const auto& der : e->signatures) {
    auto key = CheckCryptography(pae, der, keys);
    if (!key.ok()) {
      c.reason = key.error().message;
      continue;
    }
    c.key = *key;
    if (auto st = CheckStatement(e->payload, image, predicate_type); !st.ok()) {
      c.reason = st.error().message;
      return c;
    }
    c.ok = true;
    c.reason.clear();
    c.statement = std::move(e->payload);
    return c;
  }
  return c;
}

}  // namespace

Status CheckStatementClaims(std::string_view statement, const oci::Digest& image, const std::string& predicate_type) {
  return CheckStatement(statement, image, predicate_type);
}

Result<std::string> EnvelopePayload(std::string_view envelope) {
  auto e = ParseEnvelope(envelope);
  if (!e.ok()) return e.error();
  return e->payload;
}

Result<std::string> PredicateTypeFor(const std::string& t) {
  if (t == "spdxjson" || t == "spdx") return std::string("https://spdx.dev/Document");
  if (t == "custom") return std::string("https://cosign.sigstore.dev/attestation/v1");
  if (t.rfind("https://", 0) == 0) return t;
  return MakeError(ErrorKind::kInvalidInput, "--type " + t + ": want spdxjson, custom or a predicate type URI");
}

Result<std::string> InTotoStatement(const std::string& subject_name, const oci::Digest& image,
                                    const std::string& predicate_type, std::string_view predicate_json) {
  auto predicate = oci::ParseJson(predicate_json, "predicate");
  if (!predicate.ok()) return predicate.error();
  // Go's struct order (as cosign writes it); nlohmann's dump() for the predicate keeps
  // numbers that CanonicalJson would refuse.
  return R"({"_type":")" + std::string(kInTotoStatementType) + R"(","predicateType":)" +
         oci::Json(predicate_type).dump() + R"(,"subject":[{"name":)" + oci::Json(subject_name).dump() +
         R"(,"digest":{"sha256":")" + image.hex() + R"("}}],"predicate":)" + predicate->dump() + "}";
}

std::string Pae(std::string_view payload_type, std::string_view payload) {
  return "DSSEv1 " + std::to_string(payload_type.size()) + " " + std::string(payload_type) + " " +
         std::to_string(payload.size()) + " " + std::string(payload);
}

std::string DsseEnvelope(std::string_view payload_type, std::string_view payload, std::string_view der_signature) {
  return R"({"payloadType":)" + oci::Json(std::string(payload_type)).dump() + R"(,"payload":")" +
         oci::Base64Encode(payload) + R"(","signatures":[{"keyid":"","sig":")" + oci::Base64Encode(der_signature) +
         R"("}]})";
}

Decision VerifyAttestations(const std::vector<SignatureLayer>& layers, const oci::Digest& image,
                            const std::vector<TrustedKey>& keys, const std::string& predicate_type) {
  Decision d;
  for (const auto& l : layers) {
    SignatureCheck c = CheckLayer(l, image, keys, predicate_type);
    if (c.ok && std::find(d.verified_keys.begin(), d.verified_keys.end(), c.key) == d.verified_keys.end()) {
      d.verified_keys.push_back(c.key);
    }
    d.ok = d.ok || c.ok;
    d.signatures.push_back(std::move(c));
  }
  if (d.ok) return d;
  if (keys.empty()) {
    d.reason = "no trusted keys given";
  } else if (layers.empty()) {
    d.reason = "no attestations for " + image.str() + " (sha256-" + image.hex() + ".att is missing or empty)";
  } else {
    d.reason = d.signatures[0].reason;
    if (layers.size() > 1)
      d.reason = "none of " + std::to_string(layers.size()) + " attestations is valid; first: " + d.reason;
  }
  return d;
}

}  // namespace imgtool::sign
