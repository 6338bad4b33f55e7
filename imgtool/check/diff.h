// `imgtool diff`: why two images that should be identical are not. Config fields are
// compared as a JSON patch; layers are compared by position, and inside each differing
// layer every path is compared: presence, type, content digest, mode, owner, mtime,
// link target, so a user learns which input file moved.
#pragma once

#include <string>
#include <vector>

#include "oci/image.h"
#include "oci/result.h"

namespace imgtool::check {

struct PathChange {
  std::string path;
  std::string field;  // "added", "removed", "type", "content", "mode", "owner", "mtime", "link", "size"
  std::string a;      // value in the first image ("" when added)
  std::string b;      // value in the second image ("" when removed)
};

struct LayerDiff {
  size_t index = 0;      // 1-based position
  std::string a_digest;  // "" when the first image has no layer here
  std::string b_digest;
  std::vector<PathChange> changes;
};

struct ConfigChange {
  std::string path;  // JSON pointer into the config: "/config/Env/1"
  std::string a;
  std::string b;
};

struct ImageDiff {
  std::string a_digest;
  std::string b_digest;
  std::vector<ConfigChange> config;
  std::vector<LayerDiff> layers;
  bool identical() const { return a_digest == b_digest; }
};

Result<ImageDiff> DiffImages(const oci::Image& a, const oci::Image& b);

}  // namespace imgtool::check
