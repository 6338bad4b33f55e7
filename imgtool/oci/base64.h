// The one base64 codec: standard alphabet, padded (RFC 4648 section 4), as cosign writes
// signatures, Go's encoding/json writes []byte fields and Docker writes "auth" in its
// config. OpenSSL's block codec underneath.
#pragma once

#include <string>
#include <string_view>

#include "oci/result.h"

namespace imgtool::oci {

std::string Base64Encode(std::string_view bytes);
// Refuses anything that is not canonical padded base64 (whitespace, missing padding, bits
// set in the padding): one spelling per value, so signed text cannot be re-spelled.
// `what` names the field in the error.
Result<std::string> Base64Decode(std::string_view text, const std::string& what);

}  // namespace imgtool::oci
