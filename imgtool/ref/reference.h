// Image references in skopeo's transport syntax:
//   oci:DIR[:TAG]            an OCI image layout folder
//   oci-archive:FILE[:TAG]   a tar of such a folder
//   docker://HOST[:PORT]/REPO[:TAG|@DIGEST]   a registry (transport arrives later)
// As in containers/image, the path ends at the first ':' after the transport.
#pragma once

#include <string>

#include "oci/result.h"

namespace imgtool::ref {

enum class Transport { kOciLayout, kOciArchive, kDocker };

struct Reference {
  Transport transport = Transport::kOciLayout;
  std::string path;  // folder or archive file (oci, oci-archive)
  std::string tag;   // may be empty: "the only image in the layout"; oci:DIR@sha256:.. puts the digest here too
  // docker:// parts
  std::string host;
  std::string repository;
  std::string digest;  // "sha256:..." when pinned (docker://...@, oci:DIR@, oci-archive:FILE@)

  std::string str() const;
};

Result<Reference> ParseReference(const std::string& text);

}  // namespace imgtool::ref
