#include "ref/url.h"

#include <algorithm>
#include <cctype>

namespace imgtool::ref {

namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// [begin, end) of the authority (userinfo@host:port) after "SCHEME://"; begin is npos
// when the text has no scheme.
std::pair<size_t, size_t> Authority(const std::string& url) {
  size_t sep = url.find("://");
  if (sep == std::string::npos || sep == 0) return {std::string::npos, 0};
  for (size_t i = 0; i < sep; ++i) {
    unsigned char c = static_cast<unsigned char>(url[i]);
    if (!std::isalnum(c) && c != '+' && c != '-' && c != '.') return {std::string::npos, 0};
  }
  size_t begin = sep + 3;
  size_t end = url.find_first_of("/?#", begin);
  return {begin, end == std::string::npos ? url.size() : end};
}

}  // namespace

std::string WithoutUserinfo(const std::string& url) {
  auto [begin, end] = Authority(url);
  if (begin == std::string::npos) return url;
  // The last '@' ends the userinfo: a password may itself hold an unencoded '@'.
  size_t at = url.rfind('@', end - 1);
  if (at == std::string::npos || at < begin) return url;
  return url.substr(0, begin) + url.substr(at + 1);
}

std::string OriginOf(const std::string& url) {
  auto [begin, end] = Authority(url);
  if (begin == std::string::npos) return "";
  std::string scheme = Lower(url.substr(0, begin - 3));
  if (scheme != "http" && scheme != "https") return "";
  std::string hostport = Lower(WithoutUserinfo(url.substr(0, end)).substr(begin));
  // The port follows the last ':' outside an IPv6 literal's brackets.
  size_t colon = hostport.rfind(':');
  size_t bracket = hostport.rfind(']');
  std::string host = hostport, port;
  if (colon != std::string::npos && (bracket == std::string::npos || colon > bracket)) {
    host = hostport.substr(0, colon);
    port = hostport.substr(colon + 1);
  }
  if (host.empty() || port.find_first_not_of("0123456789") != std::string::npos) return "";
  if (port.empty()) port = scheme == "https" ? "443" : "80";
  port.erase(0, std::min(port.find_first_not_of('0'), port.size() - 1));  // "0080" is port 80
  return scheme + "://" + host + ":" + port;
}

}  // namespace imgtool::ref
