// manifest.json, the table of contents of a `docker save` tarball (Docker >= 1.10):
//   [{"Config": "<hex>.json", "RepoTags": ["docker.io/library/app:v1"], "Layers": ["<hex>.tar", ...]}]
// one entry per image, each naming members of the tar. Docker >= 25 names members under
// blobs/sha256/; older Dockers `<id>/layer.tar`; skopeo `<diff_id hex>.tar`. Other keys
// (Parent, LayerSources) are not read, as containers/image does not read them.
//
// Parsed with oci::ParseJson (depth cap, duplicate keys refused); every list (images,
// layers of an image, tags of an image) is checked against oci::kMaxListEntries before
// it is walked. The legacy `repositories` file is not read: docker load and skopeo
// ignore it whenever manifest.json is there, and a tarball without manifest.json (Docker
// before 1.10) is refused.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "oci/result.h"

namespace imgtool::tarball {

inline constexpr uint64_t kMaxManifestJsonBytes = 1 << 20;  // containers/image's limit

struct SavedImage {
  std::string config;                  // member name of the image config
  std::vector<std::string> repo_tags;  // "NAME:TAG" as written (skopeo: docker.io/library/app:v1)
  std::vector<std::string> layers;     // member names, bottom layer first
};

// kInvalidInput naming the entry ("manifest.json image @1: Layers: ...") for anything else.
Result<std::vector<SavedImage>> ParseManifestJson(std::string_view bytes);

// What a writer puts in the tar: manifest.json for `images` (canonical JSON), and the
// legacy `repositories` file ({"NAME": {"TAG": "<top layer id>"}}) for the tags given.
Result<std::string> ManifestJsonBytes(const std::vector<SavedImage>& images);
struct RepositoryTag {
  std::string name, tag, top_layer;
};
Result<std::string> RepositoriesBytes(const std::vector<RepositoryTag>& tags);

}  // namespace imgtool::tarball
