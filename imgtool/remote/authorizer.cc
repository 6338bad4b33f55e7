#include "remote/authorizer.h"

#include <cctype>

#include "oci/base64.h"
#include "ref/url.h"
#include "remote/registry_error.h"
#include "remote/response.h"

namespace imgtool::remote {

namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The token request of the distribution spec: a GET with the credentials as Basic;
// or, for an identity token, the OAuth2 refresh-token POST (docs/spec/auth/oauth.md),
// as docker and containers/image send it: scopes space-separated, the token in the
// body, where --debug never prints it.
HttpRequest TokenRequest(const std::string& realm, const Challenge& ch, const std::vector<std::string>& scopes,
                         const std::optional<Credentials>& creds) {
  HttpRequest req;
  req.max_body = 1 << 20;
  auto service = ch.params.find("service");
  if (creds && !creds->identity_token.empty()) {
    req.method = "POST";
    req.url = realm;
    req.headers.emplace_back("Content-Type: application/x-www-form-urlencoded");
    req.body = "grant_type=refresh_token&client_id=imgtool&refresh_token=" + UrlEncode(creds->identity_token);
    if (service != ch.params.end()) req.body += "&service=" + UrlEncode(service->second);
    if (!scopes.empty()) req.body += "&scope=" + UrlEncode(Join(scopes));
    req.has_body = true;
    return req;
  }
  std::string query;
  if (service != ch.params.end()) query += "service=" + UrlEncode(service->second);
  for (const auto& s : scopes) query += std::string(query.empty() ? "" : "&") + "scope=" + UrlEncode(s);
  req.url = realm;
  if (!query.empty()) req.url += (realm.find('?') == std::string::npos ? "?" : "&") + query;
  if (creds)
    req.headers.push_back("Authorization: Basic " + oci::Base64Encode(creds->username + ":" + creds->password));
  return req;
}

}  // namespace

std::string RepoScope(const std::string& repo, bool push) {
  return "repository:" + repo + (push ? ":pull,push" : ":pull");
}

std::string UrlEncode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

Result<Challenge> ParseChallenge(const std::string& header) {
  Challenge ch;
  size_t i = 0;
  while (i < header.size() && header[i] == ' ') ++i;
  size_t sp = header.find(' ', i);
  ch.scheme = Lower(header.substr(i, sp == std::string::npos ? std::string::npos : sp - i));
  if (ch.scheme.empty()) return MakeError(ErrorKind::kTransport, "empty WWW-Authenticate challenge");
  if (sp == std::string::npos) return ch;
  i = sp + 1;
  while (i < header.size()) {
    while (i < header.size() && (header[i] == ' ' || header[i] == ',')) ++i;
    size_t eq = header.find('=', i);
    if (eq == std::string::npos) break;
    std::string key = Lower(header.substr(i, eq - i));
    i = eq + 1;
    std::string value;
    if (i < header.size() && header[i] == '"') {
      ++i;
      while (i < header.size() && header[i] != '"') {
        if (header[i] == '\\' && i + 1 < header.size()) ++i;
        value += header[i++];
      }
      if (i >= header.size()) return MakeError(ErrorKind::kTransport, "WWW-Authenticate: unterminated quote");
      ++i;
    } else {
      size_t end = header.find(',', i);
      value = header.substr(i, end == std::string::npos ? std::string::npos : end - i);
      i = end == std::string::npos ? header.size() : end;
    }
    ch.params[key] = value;
  }
  return ch;
}

std::string Authorizer::HeaderFor(const std::vector<std::string>& scopes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tokens_.find(Join(scopes));
  if (it != tokens_.end()) return it->second;
  return basic_;
}

Status Authorizer::Answer(HttpClient& http, const HttpResponse& unauthorized, const std::vector<std::string>& scopes) {
  std::optional<Challenge> bearer, basic;
  for (const auto& h : unauthorized.www_authenticate) {
    auto ch = ParseChallenge(h);
    if (!ch.ok()) return ch.error();
    if (ch->scheme == "bearer") bearer = *ch;
    if (ch->scheme == "basic") basic = *ch;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (bearer) return FetchToken(http, *bearer, scopes);
  if (basic && creds_ && !creds_->identity_token.empty()) {
    // Sending the refresh token as a Basic password would hand it to a server that
    // never issued it.
    return MakeError(ErrorKind::kDenied,
                     "the registry wants Basic auth, but the credentials from " + creds_->source +
                         " are an identity token (user \"<token>\"), which only a token server takes");
  }
  if (basic && creds_) basic_ = "Authorization: Basic " + oci::Base64Encode(creds_->username + ":" + creds_->password);
  return Status::Ok();
}

Status Authorizer::FetchToken(HttpClient& http, const Challenge& ch, const std::vector<std::string>& scopes) {
  auto realm = ch.params.find("realm");
  if (realm == ch.params.end() || realm->second.empty()) {
    return MakeError(ErrorKind::kTransport, "Bearer challenge without a realm");
  }
  HttpRequest req = TokenRequest(realm->second, ch, scopes, creds_);
  NetError net;
  auto resp = http.Send(req, &net);
  if (!resp.ok()) return resp.error().Context("token server");
  const std::string server = "token server " + ref::WithoutUserinfo(realm->second);
  if (resp->status != 200) return ErrorFromResponse(*resp, server);
  std::string token = TokenFromReply(resp->body);
  if (token.empty()) return MakeError(ErrorKind::kTransport, server + ": no token in reply");
  tokens_[Join(scopes)] = "Authorization: Bearer " + token;
  return Status::Ok();
}

}  // namespace imgtool::remote
