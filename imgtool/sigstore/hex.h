// Lowercase hex, as Rekor writes digests and log IDs in its JSON.
#pragma once

#include <string>
#include <string_view>

namespace imgtool::sigstore {

std::string HexEncode(std::string_view bytes);

}  // namespace imgtool::sigstore
