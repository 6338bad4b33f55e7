// The registry name grammar of docker/distribution's reference package, and Docker Hub's
// short names normalised as containers/image does (skopeo's docker:// transport):
//   nginx                       -> docker.io/library/nginx
//   team/app:1                  -> docker.io/team/app:1
//   index.docker.io/app         -> docker.io/library/app
//   reg:5000/a/b, [::1]:5000/a, localhost/a, Reg/a   (a registry host is named)
// The first component names a host only when it has a '.' or ':', is "localhost", or has
// an uppercase letter (repositories are lowercase, so it cannot be one).
// Grammar only: no I/O, and the default tag "latest" is left to callers.
#pragma once

#include <string>
#include <string_view>

#include "oci/result.h"

namespace imgtool::ref {

// Docker Hub's canonical name, as it appears in references, policies and credentials.
inline constexpr std::string_view kDockerHubHost = "docker.io";
inline constexpr size_t kMaxNameLength = 255;  // HOST/REPOSITORY
inline constexpr size_t kMaxTagLength = 128;

struct DockerName {
  std::string host;        // "docker.io" when none was written
  std::string repository;  // "library/nginx"
  std::string tag;         // as written; empty when none was
  std::string digest;      // "sha256:<64 hex>" as written; empty when none was
};

// NAME[:TAG][@DIGEST] as a pod spec or docker CLI writes it. A tag beside a digest is
// kept: the grammar allows both, and callers decide (registries are asked by digest).
// Errors are kInvalidInput and say only why, with no context: callers add the text.
Result<DockerName> ParseDockerName(std::string_view text);

// The host that answers the distribution API for HOST: Docker Hub serves
// docker.io (and the legacy index.docker.io) from registry-1.docker.io. Every other host
// answers for itself. For URLs only: messages and credentials use the canonical host.
std::string RegistryApiHost(std::string_view host);

// Token rules shared with oci: and oci-archive:. The error says why the token is refused.
Status CheckTag(std::string_view tag);        // [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
Status CheckDigest(std::string_view digest);  // sha256:<64 lowercase hex>, the only algorithm

}  // namespace imgtool::ref
