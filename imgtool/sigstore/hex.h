// Lowercase hex, as Rekor writes digests and log IDs in its JSON.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace imgtool::sigstore {

std::string HexEncode(std::string_view bytes);
// Lowercase hex (as Rekor's log IDs and digests are written) back to bytes; nullopt for
// anything else: odd length, upper case, other characters.
std::optional<std::string> HexDecode(std::string_view hex);

}  // namespace imgtool::sigstore
