// Answers a registry's 401: parses WWW-Authenticate and settles on an Authorization
// header per scope. Basic sends the credentials; Bearer runs the token flow (GET
// realm?service=..&scope=.., with the credentials as Basic when there are any, reading
// "token" or "access_token"). An identity token (Credentials::identity_token) is sent
// only to a token server, in the OAuth2 refresh-token POST; a registry that wants Basic
// gets an error instead. Tokens are cached per scope set and shared by every transfer
// thread.
//
// Not here: where the credentials came from (credentials.h) and retry policy (registry.h).
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "oci/result.h"
#include "remote/credentials.h"
#include "remote/http.h"

namespace imgtool::remote {

struct Challenge {
  std::string scheme;                         // lower case: "basic", "bearer"
  std::map<std::string, std::string> params;  // realm, service, scope, error (keys lower case)
};

// Parses one WWW-Authenticate value (`Bearer realm="..",service="..",scope=".."`).
Result<Challenge> ParseChallenge(const std::string& header);

// "repository:REPO:pull" / "repository:REPO:pull,push".
std::string RepoScope(const std::string& repo, bool push);

std::string UrlEncode(const std::string& s);

class Authorizer {
 public:
  explicit Authorizer(std::optional<Credentials> creds) : creds_(std::move(creds)) {}

  // The header to send for `scopes`, or "" when anonymous (so far).
  std::string HeaderFor(const std::vector<std::string>& scopes);
  // Learns from a 401 response and obtains a credential for `scopes`. Ok with no new
  // header when nothing can be done (anonymous against Basic): the caller reports the 401.
  Status Answer(HttpClient& http, const HttpResponse& unauthorized, const std::vector<std::string>& scopes);
  bool has_credentials() const { return creds_.has_value(); }

 private:
  Status FetchToken(HttpClient& http, const Challenge& ch, const std::vector<std::string>& scopes);

  std::optional<Credentials> creds_;
  std::mutex mu_;
  std::string basic_;                          // set once a Basic challenge was seen
  std::map<std::string, std::string> tokens_;  // scope key -> "Bearer ..."
};

}  // namespace imgtool::remote
