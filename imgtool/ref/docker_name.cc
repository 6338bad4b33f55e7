#include "ref/docker_name.h"

#include <algorithm>

#include "oci/digest.h"
#include "oci/quote.h"

namespace imgtool::ref {

namespace {

constexpr std::string_view kLegacyHubHost = "index.docker.io";
constexpr std::string_view kOfficialPrefix = "library/";  // Docker Hub's official images
constexpr auto npos = std::string_view::npos;

Error Why(const std::string& why) { return MakeError(ErrorKind::kInvalidInput, why); }

std::string Quoted(std::string_view s) { return oci::Quoted(s, '\''); }

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsAlnum(char c) { return IsLowerAlnum(c) || IsUpper(c); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool HasUpper(std::string_view s) { return std::any_of(s.begin(), s.end(), IsUpper); }

// [a-z0-9]+ joined by one '.', one '_', "__" or a run of '-'.
bool ValidPathComponent(std::string_view c) {
  size_t i = 0;
  while (true) {
    size_t run = i;
    while (i < c.size() && IsLowerAlnum(c[i])) ++i;
    if (i == run) return false;  // empty, or a separator first, last or beside another kind
    if (i == c.size()) return true;
    size_t sep = i;
    while (i < c.size() && !IsLowerAlnum(c[i])) ++i;
    std::string_view s = c.substr(sep, i - sep);
    bool dashes = s.find_first_not_of('-') == npos;
    if (s != "." && s != "_" && s != "__" && !dashes) return false;
  }
}

// Dot-separated labels of [A-Za-z0-9-] that neither start nor end with '-'.
bool ValidDomainName(std::string_view d) {
  size_t start = 0;
  while (true) {
    size_t dot = d.find('.', start);
    std::string_view label = d.substr(start, dot == npos ? npos : dot - start);
    if (label.empty() || label.front() == '-' || label.back() == '-') return false;
    for (char c : label) {
      if (!IsAlnum(c) && c != '-') return false;
    }
    if (dot == npos) return true;
    start = dot + 1;
  }
}

// domain-name or [IPv6], then an optional :PORT of digits (no range check, as the grammar).
bool ValidHost(std::string_view h) {
  std::string_view port;
  if (!h.empty() && h.front() == '[') {
    size_t close = h.find(']');
    if (close == npos || close == 1) return false;
    std::string_view addr = h.substr(1, close - 1);
    if (!std::all_of(addr.begin(), addr.end(), [](char c) { return IsHex(c) || c == ':'; })) return false;
    std::string_view rest = h.substr(close + 1);
    if (rest.empty()) return true;
    if (rest.front() != ':') return false;
    port = rest.substr(1);
  } else {
    size_t colon = h.find(':');
    if (!ValidDomainName(h.substr(0, colon))) return false;
    if (colon == npos) return true;
    port = h.substr(colon + 1);
  }
  return !port.empty() && std::all_of(port.begin(), port.end(), IsDigit);
}

// What containers/image takes for a registry: a repository component is lowercase and has
// no '.' or ':', so anything else before the first '/' can only be a host.
bool NamesHost(std::string_view first) {
  return first == "localhost" || first.find_first_of(".:") != npos || HasUpper(first);
}

Status CheckRepository(std::string_view repo) {
  if (repo.empty()) return Why("the repository is empty");
  if (HasUpper(repo)) return Why("repository " + Quoted(repo) + " must be lowercase");
  size_t start = 0;
  while (true) {
    size_t slash = repo.find('/', start);
    std::string_view c = repo.substr(start, slash == npos ? npos : slash - start);
    if (c.empty()) return Why("repository " + Quoted(repo) + " has an empty path component");
    if (!ValidPathComponent(c)) {
      return Why("repository " + Quoted(repo) + ": " + Quoted(c) +
                 " is not a path component (lowercase letters and digits joined by '.', '_', '__' or '-'s)");
    }
    if (slash == npos) return Status::Ok();
    start = slash + 1;
  }
}

// distribution refuses these: "docker://<image id>" would read as a repository.
bool IsImageId(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) { return IsDigit(c) || (c >= 'a' && c <= 'f'); });
}

}  // namespace

Status CheckTag(std::string_view tag) {
  if (tag.empty()) return Why("the tag is empty");
  if (tag.size() > kMaxTagLength) {
    return Why("the tag is " + std::to_string(tag.size()) + " characters, more than " + std::to_string(kMaxTagLength));
  }
  auto word = [](char c) { return IsAlnum(c) || c == '_'; };
  bool ok =
      word(tag[0]) && std::all_of(tag.begin(), tag.end(), [&](char c) { return word(c) || c == '.' || c == '-'; });
  if (!ok) return Why("tag " + Quoted(tag) + " is not a valid tag");
  return Status::Ok();
}

Status CheckDigest(std::string_view digest) {
  if (digest.empty()) return Why("the digest is empty");
  size_t colon = digest.find(':');
  if (colon == npos || colon == 0) {
    return Why("digest " + Quoted(digest) + " has no algorithm: want sha256:<64 lowercase hex digits>");
  }
  std::string_view algorithm = digest.substr(0, colon);
  if (algorithm != "sha256") return Why("unsupported digest algorithm " + Quoted(algorithm) + " (only sha256)");
  auto parsed = oci::Digest::Parse(digest);
  if (!parsed.ok()) return parsed.error();
  return Status::Ok();
}

Result<DockerName> ParseDockerName(std::string_view text) {
  if (text.empty()) return Why("the name is empty");
  if (IsImageId(text)) return Why(Quoted(text) + " is 64 hex digits: an image ID, not a repository");
  DockerName n;
  std::string_view name = text;
  if (size_t at = name.find('@'); at != npos) {
    IMGTOOL_TRY(CheckDigest(name.substr(at + 1)));
    n.digest = std::string(name.substr(at + 1));
    name = name.substr(0, at);
  }
  // The host is split off before the tag: in "reg:5000/app" the ':' is the port's.
  std::string_view remote = name;
  n.host = std::string(kDockerHubHost);
  if (size_t slash = name.find('/'); slash != npos && NamesHost(name.substr(0, slash))) {
    std::string_view host = name.substr(0, slash);
    if (!ValidHost(host)) return Why("registry host " + Quoted(host) + " is not a valid HOST[:PORT]");
    if (host != kLegacyHubHost) n.host = std::string(host);
    remote = name.substr(slash + 1);
  }
  if (size_t colon = remote.find(':'); colon != npos) {
    IMGTOOL_TRY(CheckTag(remote.substr(colon + 1)));
    n.tag = std::string(remote.substr(colon + 1));
    remote = remote.substr(0, colon);
  }
  IMGTOOL_TRY(CheckRepository(remote));
  n.repository = std::string(remote);
  if (n.host == kDockerHubHost && remote.find('/') == npos) n.repository.insert(0, kOfficialPrefix);
  // As containers/image counts it: the whole name, host included, after normalising.
  size_t length = n.host.size() + 1 + n.repository.size();
  if (length > kMaxNameLength) {
    return Why("the name " + n.host + "/" + n.repository.substr(0, 24) + "... is " + std::to_string(length) +
               " characters, more than " + std::to_string(kMaxNameLength));
  }
  return n;
}

std::string RegistryApiHost(std::string_view host) {
  if (host == kDockerHubHost || host == kLegacyHubHost) return "registry-1.docker.io";
  return std::string(host);
}

}  // namespace imgtool::ref
