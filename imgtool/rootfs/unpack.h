// Applying one layer's tar headers to a tree, by the rules of the two kinds of unpacker a
// runtime uses (image-spec layer.md, "Applying Changesets"):
//
// - overlay (containerd's overlayfs snapshotter, what Kubernetes nodes run; docker's
//   overlay2 and containers/storage alike): each layer is unpacked into an empty folder
//   of its own, whiteouts become whiteout devices and opaque folders get an xattr, and
//   overlayfs stacks the folders. A symlink from a lower layer is not followed while a
//   layer unpacks: `etc/passwd` over a lower `etc -> x` makes a real `etc` folder that
//   hides the link.
// - merged (umoci unpack, containerd's native snapshotter): every layer is unpacked onto
//   the one folder holding the layers below, so an entry is written through a lower
//   symlinked folder (`etc/passwd` over `etc -> x` lands in x/passwd) and whiteouts delete.
//
// Both follow containerd's archive.Apply: the name cleaned lexically (names.h), its folder
// resolved inside the root following symlinks and made when missing, a whiteout removes
// the name (".wh.", "." and ".." are refused as containerd's validateWhiteout does), an
// existing node is removed before an entry replaces it unless both are folders (then they
// merge), a hardlink's name is resolved like a folder path plus a last name that is not
// followed (containerd's hardlinkRootPath), and an entry that resolves to the root is
// skipped.
//
// Internal to imgtool/rootfs.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "archive/layer.h"
#include "rootfs/applier.h"
#include "rootfs/tree.h"

namespace imgtool::rootfs::internal {

class LayerApplier {
 public:
  // `alone`: `root` is this layer's own empty tree (overlay); else the image so far.
  LayerApplier(Node* root, bool alone, uint32_t layer, size_t max_path)
      : root_(root), alone_(alone), layer_(layer), max_path_(max_path) {}
  // Errors say why, without the layer or the entry (the caller adds them).
  // `placed` (the merged view): where the header went, for a writer onto a disk.
  Status Apply(const archive::TarHeader& h, Placement* placed = nullptr);

 private:
  Status Whiteout(const Cursor& at, const std::string& name);
  Status Opaque(const Cursor& at);
  Result<Node*> HardlinkTarget(const std::string& link, std::string* path);
  Result<std::unique_ptr<Node>> NewNode(const archive::TarHeader& h, std::string* link_path);

  Node* root_;
  bool alone_;
  uint32_t layer_;
  size_t max_path_;
  std::set<std::string> opaque_done_;  // merged: folders already made opaque by this layer
};

// Stacks one layer's own tree onto the trees below it as overlayfs shows them: a
// whiteout hides the name below, an opaque folder hides everything below it, a folder
// over a folder merges, anything else replaces what was below.
void OverlayStack(Node& lower, Node& upper);

}  // namespace imgtool::rootfs::internal
