// Image references in skopeo's transport syntax:
//   oci:DIR[:TAG|@DIGEST]            an OCI image layout folder
//   oci-archive:FILE[:TAG|@DIGEST]   a tar of such a folder
//   docker://[HOST[:PORT]/]REPO[:TAG][@DIGEST]   a registry
//   docker-archive:FILE[:NAME[:TAG]|:@N]   a `docker save` tarball (skopeo's grammar:
//       the path ends at the first ':'; NAME is a docker name, normalised as for
//       docker://, its tag "latest" when none is written; @N is the N-th image, from 0)
// As in containers/image, an oci path ends at the first ':' after the transport.
// docker:// names follow docker/distribution's grammar and Docker Hub's short names
// (docker_name.h): docker://nginx is host docker.io, repository library/nginx, and
// docker://index.docker.io/... is docker.io too. Where Docker Hub's API answers is
// RegistryApiHost's business, not the reference's.
//
// What was written is kept: an unwritten tag stays empty (callers read it as "latest"
// when nothing pins the image), and a docker:// tag beside a digest stays beside it, so
// policy can judge the tag as written while registries are asked by digest.
// containers/image refuses tag+digest in its docker transport; distribution's grammar
// allows it, and refusing it would refuse references the policy rules judge today.
#pragma once

#include <string>

#include "oci/result.h"
#include "ref/docker_name.h"

namespace imgtool::ref {

enum class Transport { kOciLayout, kOciArchive, kDocker, kDockerArchive };

struct Reference {
  Transport transport = Transport::kOciLayout;
  std::string path;  // folder or archive file (oci, oci-archive)
  std::string tag;   // may be empty: "the only image in the layout"; oci:DIR@sha256:.. puts the digest here too
  // docker:// parts, normalised (docker.io, library/)
  std::string host;
  std::string repository;
  std::string digest;  // "sha256:..." when pinned (docker://...@, oci:DIR@, oci-archive:FILE@)
  // docker-archive:FILE:@N: the N-th image of manifest.json; -1 when not given. A
  // docker-archive's NAME:TAG goes in host, repository and tag (tag never empty then).
  int source_index = -1;

  // The canonical text: ParseReference(str()) gives this Reference back.
  std::string str() const;

  friend bool operator==(const Reference&, const Reference&) = default;
};

Result<Reference> ParseReference(const std::string& text);

// The docker:// Reference for a name ParseDockerName accepted.
Reference FromDockerName(DockerName name);

// What callers outside transport/ and ref/ ask of a reference, so that none of them
// compares transports itself (imgtool/README.md).
// A registry repository (docker://).
bool IsRegistry(const Reference& r);
// A file or folder on this machine (oci:, oci-archive:, docker-archive:): `path` is set.
bool IsLocalPath(const Reference& r);
// oci:PATH, untagged (callers add tag or digest).
Reference LayoutReference(std::string path);

}  // namespace imgtool::ref
