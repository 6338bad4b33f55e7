// libcurl, loaded on first use (fs/shared_library.h): a process that never reaches a
// registry or a package URL never maps it or its 25 dependencies (gnutls, krb5, ldap,
// nghttp2, ...). http.cc and builder/fetch.cc call libcurl's functions as declared in
// <curl/curl.h>; curl_library.cc defines those they use, each forwarding to libcurl.so.4.
#pragma once

#include "oci/result.h"

namespace imgtool::remote {

// Loads libcurl.so.4 once; call before the first handle. "cannot load libcurl.so.4: ...".
Status LoadCurl();

}  // namespace imgtool::remote
