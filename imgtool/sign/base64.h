// Standard base64 (RFC 4648, padded), as cosign writes signatures and Go's encoding/json
// writes []byte fields. On libsodium so the signing core needs nothing from remote/.
#pragma once

#include <string>
#include <string_view>

#include "oci/result.h"

namespace imgtool::sign {

std::string Base64Encode(std::string_view bytes);
// Refuses anything that is not canonical padded base64 (whitespace included).
Result<std::string> Base64Decode(std::string_view text, const std::string& what);

}  // namespace imgtool::sign
