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
  if (text.rfind("docker://", 0) == 0) {
    auto name = ParseDockerName(std::string_view(text).substr(9));
    if (!name.ok()) return Bad(text, name.error().message);
    return FromDockerName(std::move(*name));
  }
  return Bad(text, "want oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker://HOST/REPO[:TAG|@DIGEST]");
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
  }
  return "";
}

}  // namespace imgtool::ref
