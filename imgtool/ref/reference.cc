#include "ref/reference.h"

#include "oci/digest.h"

namespace imgtool::ref {

namespace {

Error Bad(const std::string& text, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, "image reference '" + text + "': " + why);
}

bool ValidTag(const std::string& tag) {
  // OCI distribution spec: [a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}
  if (tag.empty() || tag.size() > 128) return false;
  for (size_t i = 0; i < tag.size(); ++i) {
    char c = tag[i];
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!alnum && (i == 0 || (c != '.' && c != '-'))) return false;
  }
  return true;
}

Result<Reference> ParsePathAndTag(const std::string& text, const std::string& rest, Transport t) {
  Reference ref;
  ref.transport = t;
  // oci:DIR@sha256:HEX names the manifest with that digest, whatever its tag.
  if (auto at = rest.rfind("@sha256:"); at != std::string::npos) {
    auto d = oci::Digest::Parse(rest.substr(at + 1));
    if (!d.ok()) return Bad(text, d.error().message);
    ref.path = rest.substr(0, at);
    if (ref.path.find(':') != std::string::npos) return Bad(text, "give a tag or a digest, not both");
    if (ref.path.empty()) return Bad(text, "path is empty");
    ref.digest = d->str();
    ref.tag = ref.digest;  // layout lookups take a digest where a tag goes
    return ref;
  }
  auto colon = rest.find(':');
  ref.path = rest.substr(0, colon);
  if (colon != std::string::npos) {
    ref.tag = rest.substr(colon + 1);
    if (!ValidTag(ref.tag)) return Bad(text, "tag '" + ref.tag + "' is not a valid tag");
  }
  if (ref.path.empty()) return Bad(text, "path is empty");
  return ref;
}

Result<Reference> ParseDocker(const std::string& text, std::string rest) {
  Reference ref;
  ref.transport = Transport::kDocker;
  auto at = rest.find('@');
  if (at != std::string::npos) {
    auto d = oci::Digest::Parse(rest.substr(at + 1));
    if (!d.ok()) return Bad(text, d.error().message);
    ref.digest = d->str();
    rest = rest.substr(0, at);
  }
  auto slash = rest.find('/');
  if (slash == std::string::npos || slash == 0) return Bad(text, "want docker://HOST[:PORT]/REPO[:TAG]");
  ref.host = rest.substr(0, slash);
  std::string repo = rest.substr(slash + 1);
  auto colon = repo.rfind(':');
  if (colon != std::string::npos) {
    ref.tag = repo.substr(colon + 1);
    repo = repo.substr(0, colon);
    if (!ValidTag(ref.tag)) return Bad(text, "tag '" + ref.tag + "' is not a valid tag");
  }
  if (repo.empty()) return Bad(text, "repository is empty");
  for (char c : repo) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' || c == '/';
    if (!ok) return Bad(text, "repository '" + repo + "' must be lowercase [a-z0-9._/-]");
  }
  ref.repository = repo;
  return ref;
}

}  // namespace

Result<Reference> ParseReference(const std::string& text) {
  if (text.rfind("oci:", 0) == 0) return ParsePathAndTag(text, text.substr(4), Transport::kOciLayout);
  if (text.rfind("oci-archive:", 0) == 0) return ParsePathAndTag(text, text.substr(12), Transport::kOciArchive);
  if (text.rfind("docker://", 0) == 0) return ParseDocker(text, text.substr(9));
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
