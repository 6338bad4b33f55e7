// The one hex codec: lowercase, as OCI digests, Rekor's log IDs and md5sums are written.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace imgtool::oci {

std::string HexEncode(std::string_view bytes);
// Lowercase hex back to bytes; nullopt for anything else: odd length, upper case, other
// characters (a digest compared as text must have one spelling).
std::optional<std::string> HexDecode(std::string_view hex);

}  // namespace imgtool::oci
