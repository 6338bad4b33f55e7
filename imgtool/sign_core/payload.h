// cosign's "simple signing" payload: what a signature claims about an image. Written
// byte for byte as cosign (Go's encoding/json) writes it, so a signature made here is
// indistinguishable from one made by `cosign sign`:
//   {"critical":{"identity":{"docker-reference":"HOST/REPO"},
//    "image":{"docker-manifest-digest":"sha256:.."},"type":"cosign container image signature"},
//    "optional":null}            (or "optional":{sorted annotations})
// Parsing is the claim side of verification; the cryptographic side is keys.h.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "oci/digest.h"
#include "oci/result.h"

namespace imgtool::sign {

inline constexpr std::string_view kSimpleSigningType = "cosign container image signature";
inline constexpr std::string_view kSimpleSigningMediaType = "application/vnd.dev.cosign.simplesigning.v1+json";
inline constexpr std::string_view kSignatureAnnotation = "dev.cosignproject.cosign/signature";

// Annotations must be UTF-8 without control characters (Go's escaping of those has
// changed between releases; refusing them keeps our bytes equal to cosign's).
Result<std::string> SimpleSigningPayload(const std::string& docker_reference, const oci::Digest& image,
                                         const std::map<std::string, std::string>& annotations = {});

struct Claims {
  std::string type;
  std::string docker_reference;
  std::string manifest_digest;                     // as written: checked against the image, not trusted
  std::map<std::string, std::string> annotations;  // string-valued "optional" entries
};
// Any JSON with the critical section; `what` names the payload in errors.
Result<Claims> ParseSimpleSigningPayload(std::string_view bytes, const std::string& what);

}  // namespace imgtool::sign
