#include "sign_core/verify.h"

#include "oci/base64.h"

namespace imgtool::sign {

namespace {

Error Denied(const std::string& why) { return MakeError(ErrorKind::kDenied, why); }

std::string KeyNames(const std::vector<TrustedKey>& keys) {
  std::string s;
  for (const auto& k : keys) s += (s.empty() ? "" : ", ") + k.name;
  return s.empty() ? "none given" : s;
}

// The checks of one layer in the order that names the most specific cause.
SignatureCheck CheckLayer(const SignatureLayer& l, const oci::Digest& image, const std::vector<TrustedKey>& keys) {
  SignatureCheck c;
  c.layer = l.descriptor.digest;
  auto fail = [&](const std::string& why) {
    c.reason = why;
    return c;
  };
  if (l.descriptor.media_type != kSimpleSigningMediaType) {
    return fail("layer is a " + l.descriptor.media_type + ", not a simple signing payload");
  }
  oci::Digest actual = oci::Digest::Of(l.payload);
  if (actual != l.descriptor.digest) {
    return fail("payload altered after signing: it hashes to " + actual.str() + ", the signature manifest names " +
                l.descriptor.digest.str());
  }
  auto it = l.descriptor.annotations.find(std::string(kSignatureAnnotation));
  if (it == l.descriptor.annotations.end()) {
    return fail("no " + std::string(kSignatureAnnotation) + " annotation");
  }
  auto der = oci::Base64Decode(it->second, "signature");
  if (!der.ok() || !IsDerEcdsaSignature(*der)) {
    return fail("signature malformed: the annotation is not a base64 DER ECDSA signature");
  }
  auto key = CheckCryptography(l.payload, *der, keys);
  if (!key.ok()) return fail(key.error().message);
  c.key = *key;
  auto claims = ParseSimpleSigningPayload(l.payload, "payload");
  if (!claims.ok()) return fail(claims.error().message);
  c.docker_reference = claims->docker_reference;
  if (auto st = CheckClaims(*claims, image); !st.ok()) return fail(st.error().message);
  c.ok = true;
  return c;
}

}  // namespace

Result<std::string> CheckCryptography(std::string_view message, std::string_view der_signature,
                                      const std::vector<TrustedKey>& keys) {
  for (const auto& k : keys) {
    if (VerifySha256(k.key, message, der_signature)) return k.name;
  }
  return Denied("signature does not verify with any trusted key (tried: " + KeyNames(keys) + ")");
}

Status CheckClaims(const Claims& claims, const oci::Digest& image) {
  if (claims.type != kSimpleSigningType) {
    return Denied("payload type is '" + claims.type + "', want '" + std::string(kSimpleSigningType) + "'");
  }
  if (claims.manifest_digest != image.str()) {
    return Denied("payload signs " + (claims.manifest_digest.empty() ? "no digest" : claims.manifest_digest) +
                  ", not this image " + image.str() +
                  " (the tag moved after signing, or the signature is another image's)");
  }
  return Status::Ok();
}

Decision VerifySignatures(const std::vector<SignatureLayer>& layers, const oci::Digest& image,
                          const std::vector<TrustedKey>& keys) {
  Decision d;
  for (const auto& l : layers) {
    SignatureCheck c = CheckLayer(l, image, keys);
    if (c.ok) {
      d.ok = true;
      bool seen = false;
      for (const auto& n : d.verified_keys) seen = seen || n == c.key;
      if (!seen) d.verified_keys.push_back(c.key);
    }
    d.signatures.push_back(std::move(c));
  }
  if (d.ok) return d;
  if (keys.empty()) {
    d.reason = "no trusted keys given";
  } else if (layers.empty()) {
    d.reason = "no signatures for " + image.str() + " (sha256-" + image.hex() + ".sig is missing or empty)";
  } else if (layers.size() == 1) {
    d.reason = d.signatures[0].reason;
  } else {
    d.reason = "none of " + std::to_string(layers.size()) + " signatures is valid; first: " + d.signatures[0].reason;
  }
  return d;
}

}  // namespace imgtool::sign
