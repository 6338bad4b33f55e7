// Registry error bodies ({"errors":[{"code":"UNAUTHORIZED","message":"..."}]}) turned
// into one clear message and an error kind, plus the retry policy's notion of a
// temporary failure (go-containerregistry's transport.Error.Temporary()).
#pragma once

#include <string>

#include "oci/result.h"
#include "remote/http.h"

namespace imgtool::remote {

// "401 UNAUTHORIZED: authentication required" (codes and messages of every error in
// the body, or the bare status when the body is not the registry's JSON).
std::string DescribeResponse(const HttpResponse& resp);

// 401/403 -> kDenied, 404 -> kNotFound, anything else -> kTransport; the message is
// "<what>: <DescribeResponse>".
Error ErrorFromResponse(const HttpResponse& resp, const std::string& what);

// 5xx (but not 501) and 429 are worth another try after a pause.
bool IsTemporaryStatus(long status);

// Seconds from a Retry-After header (delta-seconds only), or -1.
double RetryAfterSeconds(const HttpResponse& resp);

}  // namespace imgtool::remote
