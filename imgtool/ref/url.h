// URLs as imgtool records, prints and compares them: the text is never re-encoded, so a
// URL without credentials reads back byte for byte (lock files compare it).
//
// Not here: fetching (builder/fetch.h) or the registry protocol (remote/).
#pragma once

#include <string>

namespace imgtool::ref {

// "https://user:secret@host:8443/p?q" -> "https://host:8443/p?q": credentials a user put
// in a URL are for the download only, never for records, messages or logs. Text that is
// not SCHEME://... comes back unchanged.
std::string WithoutUserinfo(const std::string& url);

// The origin credentials are bound to: "SCHEME://HOST:PORT", scheme and host lower case,
// the port always written (80 for http, 443 for https), no userinfo. Empty for anything
// but an absolute http(s) URL, so an empty origin never matches a registry's.
std::string OriginOf(const std::string& url);

}  // namespace imgtool::ref
