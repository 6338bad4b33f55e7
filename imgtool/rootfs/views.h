// The state ImageFs answers from: the layers, both views' trees, the setuid list. Shared
// by the Applier that builds it (applier.cc) and the ImageFs that reads it (image_fs.cc).
//
// Internal to imgtool/rootfs.
#pragma once

#include <memory>
#include <vector>

#include "oci/image.h"
#include "rootfs/image_fs.h"
#include "rootfs/tree.h"

namespace imgtool::rootfs::internal {

struct Views {
  std::vector<std::shared_ptr<const oci::Layer>> layers;
  Limits limits;
  std::unique_ptr<Node> overlay = Node::Dir();
  std::unique_ptr<Node> merged = Node::Dir();
  std::vector<SetuidEntry> setuid;

  Node* root(Unpacker view) const { return view == Unpacker::kOverlay ? overlay.get() : merged.get(); }
};

}  // namespace imgtool::rootfs::internal
