// What a registry puts in its answers, read as pure functions: the tag list body and its
// Link pagination, Location and Range of an upload session, a HEAD's Content-Length,
// a token server's reply, a manifest's media type. Kept apart from the requests that
// receive them so that each is a unit test and a fuzz target (tests/fuzz): every one of
// these is text from a server we do not control, and none may throw.
//
// Not here: error bodies and Retry-After (registry_error.h), WWW-Authenticate
// (authorizer.h), the credentials file (credentials.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace imgtool::remote {

// The next page of a tag list from its Link header (`</v2/r/tags/list?last=x&n=y>;
// rel="next"`), absolute (a target starting with "http" as given, else after
// `base_url`); "" when there is no next page.
std::string NextPageUrl(const std::string& link, const std::string& base_url);

// The string entries of a /tags/list body's "tags"; nothing when the body is not the
// registry's JSON.
std::vector<std::string> TagsFromBody(const std::string& body);

// An upload session's Location: http:// and https:// URLs as given, anything else (a
// path) after `base_url`.
std::string AbsoluteLocation(const std::string& base_url, const std::string& location);

// The offset an interrupted upload continues at, from the session's "Range: 0-N"
// (N + 1); 0 when the range is empty, "0-0" or has no '-'.
uint64_t ResumeOffset(const std::string& range);

// A HEAD's Content-Length: the value when it is a decimal number that fits, else -1
// (absent or not a number: the size is unknown, the blob still exists).
int64_t ContentLength(const std::string& value);

// The token of a token server's 200 reply: "token", else "access_token" (strings only);
// "" when there is none.
std::string TokenFromReply(const std::string& body);

// A manifest's media type: the body's "mediaType", else "manifests" means an index, else
// a JSON Content-Type (parameters dropped), else an OCI image manifest.
std::string ManifestMediaType(const std::string& bytes, const std::string& content_type);

}  // namespace imgtool::remote
