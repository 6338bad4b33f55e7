#include "ref/reference.h"

#include <algorithm>
#include <string_view>

#include "oci/quote.h"
#include "ref/docker_name.h"

namespace imgtool::ref {

namespace {

Error Bad(const std::string& text, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, "image reference " + oci::Quoted(text, '\'') + ": " + why);
}

bool IsHexDigit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsAlgorithmChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' || c == '.' ||
         c == '_' || c == '-';
}

// After the last '@' of an oci path: "sha256:..." is a digest (checked, so a short one is
// refused), and so is another algorithm's name beside 32+ hex digits (refused as
// unsupported, rather than read as a folder "DIR@sha512" and a hex tag). Anything else
// stays part of the path: "oci:shots@2x:v1" is folder "shots@2x", tag "v1".
bool LooksLikeDigest(std::string_view s) {
  if (s.substr(0, 7) == "sha256:") return true;
  size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  std::string_view algorithm = s.substr(0, colon), hex = s.substr(colon + 1);
  return std::all_of(algorithm.begin(), algorithm.end(), IsAlgorithmChar) && hex.size() >= 32 &&
         std::all_of(hex.begin(), hex.end(), IsHexDigit);
}

Result<Reference> ParsePathAndTag(const std::string& text, const std::string& rest, Transport t) {
  Reference ref;
  ref.transport = t;
  // oci:DIR@sha256:HEX names the manifest with that digest, whatever its tag.
  if (auto at = rest.rfind('@'); at != std::string::npos && LooksLikeDigest(rest.substr(at + 1))) {
    std::string digest = rest.substr(at + 1);
    if (auto st = CheckDigest(digest); !st.ok()) return Bad(text, st.error().message);
    ref.path = rest.substr(0, at);
    if (ref.path.find(':') != std::string::npos) return Bad(text, "give a tag or a digest, not both");
    if (ref.path.empty()) return Bad(text, "path is empty");
    ref.digest = digest;
    ref.tag = ref.digest;  // layout lookups take a digest where a tag goes
    return ref;
  }
  auto colon = rest.find(':');
  ref.path = rest.substr(0, colon);
  if (colon != std::string::npos) {
    ref.tag = rest.substr(colon + 1);
    if (auto st = CheckTag(ref.tag); !st.ok()) return Bad(text, st.error().message);
  }
  if (ref.path.empty()) return Bad(text, "path is empty");
  return ref;
}

// docker-archive:FILE[:NAME[:TAG]|:@N], as containers/image reads it: the path ends at the
// first ':', NAME is normalised as docker:// names are (its tag "latest" when none is
// written), and @N is the N-th image of the archive's manifest.json. A docker-archive
// holds no manifests of its own, so nothing in it has a digest to name.
Result<Reference> ParseDockerArchive(const std::string& text, const std::string& rest) {
  Reference ref;
  ref.transport = Transport::kDockerArchive;
  auto colon = rest.find(':');
  ref.path = rest.substr(0, colon);
  if (ref.path.empty()) return Bad(text, "path is empty");
  if (colon == std::string::npos) return ref;
  std::string_view name = std::string_view(rest).substr(colon + 1);
  if (!name.empty() && name[0] == '@') {
    std::string_view n = name.substr(1);
    if (n.empty() || n.size() > 6 || !std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return Bad(text, oci::Quoted(name, '\'') + " is not an image number (@0, @1, ...)");
    }
    ref.source_index = std::stoi(std::string(n));
    return ref;
  }
  auto parsed = ParseDockerName(name);
  if (!parsed.ok()) return Bad(text, parsed.error().message);
  if (!parsed->digest.empty()) return Bad(text, "a docker-archive names its images by NAME:TAG or @N, not by digest");
  ref.host = std::move(parsed->host);
  ref.repository = std::move(parsed->repository);
  ref.tag = parsed->tag.empty() ? "latest" : std::move(parsed->tag);
  return ref;
}

}  // namespace

Reference FromDockerName(DockerName name) {
  Reference ref;
  ref.transport = Transport::kDocker;
  ref.host = std::move(name.host);
  ref.repository = std::move(name.repository);
  ref.tag = std::move(name.tag);
  ref.digest = std::move(name.digest);
  return ref;
}

Result<Reference> ParseReference(const std::string& text) {
  if (text.rfind("oci:", 0) == 0) return ParsePathAndTag(text, text.substr(4), Transport::kOciLayout);
  if (text.rfind("oci-archive:", 0) == 0) return ParsePathAndTag(text, text.substr(12), Transport::kOciArchive);
  if (text.rfind("docker-archive:", 0) == 0) return ParseDockerArchive(text, text.substr(15));
  if (text.rfind("docker://", 0) == 0) {
    auto name = ParseDockerName(std::string_view(text).substr(9));
    if (!name.ok()) return Bad(text, name.error().message);
    return FromDockerName(std::move(*name));
  }
  return Bad(text,
             "want oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE[:NAME:TAG] or "
             "docker://HOST/REPO[:TAG|@DIGEST]");
}

std::string Reference::str() const {
  switch (transport) {
    case Transport::kOciLayout:
      return "oci:" + path + (!digest.empty() ? "@" + digest : tag.empty() ? "" : ":" + tag);
    case Transport::kOciArchive:
      return "oci-archive:" + path + (!digest.empty() ? "@" + digest : tag.empty() ? "" : ":" + tag);
    case Transport::kDocker:
      return "docker://" + host + "/" + repository + (tag.empty() ? "" : ":" + tag) +
             (digest.empty() ? "" : "@" + digest);
    case Transport::kDockerArchive:
      if (source_index >= 0) return "docker-archive:" + path + ":@" + std::to_string(source_index);
      return "docker-archive:" + path + (repository.empty() ? "" : ":" + host + "/" + repository + ":" + tag);
  }
  return "";
}

bool IsRegistry(const Reference& r) { return r.transport == Transport::kDocker; }

bool IsLocalPath(const Reference& r) { return !IsRegistry(r); }

Reference LayoutReference(std::string path) {
  Reference r;
  r.transport = Transport::kOciLayout;
  r.path = std::move(path);
  return r;
}

}  // namespace imgtool::ref
