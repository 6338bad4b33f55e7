#include "rootfs/unpack.h"

namespace imgtool::rootfs::internal {

namespace {

constexpr std::string_view kWhiteoutPrefix = ".wh.";
constexpr std::string_view kOpaque = ".wh..wh..opq";

Error Invalid(const std::string& why) { return MakeError(ErrorKind::kInvalidInput, why); }

// Merged: what an opaque marker leaves of a folder, containerd's way: only what this
// layer's entries wrote (and, inside folders it wrote, again only that). umoci also keeps
// folders made as parents of this layer's entries, as overlay does; where they differ the
// two views disagree and the read fails closed.
void ClearUnwritten(Node& dir, int32_t layer) {
  for (auto it = dir.children->begin(); it != dir.children->end();) {
    Node& child = *it->second;
    if (child.written_by != layer) {
      it = dir.children->erase(it);
      continue;
    }
    if (child.type == NodeType::kDir) ClearUnwritten(child, layer);
    ++it;
  }
}

// A tree that replaces what was below it has nothing to hide.
void DropWhiteouts(Node& dir) {
  if (dir.type != NodeType::kDir) return;
  dir.opaque = false;
  for (auto it = dir.children->begin(); it != dir.children->end();) {
    if (it->second->type == NodeType::kWhiteout) {
      it = dir.children->erase(it);
      continue;
    }
    DropWhiteouts(*it->second);
    ++it;
  }
}

}  // namespace

Status LayerApplier::Apply(const archive::TarHeader& h, Placement* placed) {
  Placement unused;
  Placement& out = placed ? *placed : unused;
  Components comps = CleanName(h.name);
  if (comps.empty()) return Status::Ok();  // the root: containerd skips it ("resolved to root")
  if (std::string bad = TooLongComponent(comps); !bad.empty()) {
    return Invalid("a name of more than " + std::to_string(kMaxComponent) + " bytes");
  }
  std::string base = std::move(comps.back());
  comps.pop_back();
  Cursor at(root_, max_path_);
  IMGTOOL_TRY(at.Descend(comps, /*create=*/true));
  out.dir = at.path();
  if (base == kOpaque) {
    out.kind = Placement::Kind::kOpaque;
    return Opaque(at);
  }
  if (base.rfind(kWhiteoutPrefix, 0) == 0) {
    out.kind = Placement::Kind::kRemove;
    out.name = base.substr(kWhiteoutPrefix.size());
    return Whiteout(at, out.name);
  }
  IMGTOOL_TRY(at.Room(base));
  out.name = base;
  Node* dir = at.dir();
  Node* existing = dir->Find(base);
  if (existing && existing->type == NodeType::kDir && h.type == archive::HeaderType::kDir) {
    existing->mode = h.mode;  // folder over folder: merged, the metadata is the new entry's
    existing->written_by = static_cast<int32_t>(layer_);
    out.kind = Placement::Kind::kDirMetadata;
    return Status::Ok();
  }
  if (existing) dir->Erase(base);  // before a hardlink is resolved, as RemoveAll comes before link()
  auto node = NewNode(h, &out.link_path);
  if (!node.ok()) return node.error();
  dir->Put(base, std::move(*node));
  out.kind = Placement::Kind::kCreate;
  return Status::Ok();
}

Result<std::unique_ptr<Node>> LayerApplier::NewNode(const archive::TarHeader& h, std::string* link_path) {
  using archive::HeaderType;
  if (h.type == HeaderType::kDir) {
    auto dir = Node::Dir(h.mode);
    dir->written_by = static_cast<int32_t>(layer_);
    return dir;
  }
  auto node = std::make_unique<Node>();
  node->written_by = static_cast<int32_t>(layer_);
  node->mode = h.mode;
  node->layer = layer_;
  node->entry = h.ordinal;
  switch (h.type) {
    case HeaderType::kFile:
      node->type = NodeType::kFile;
      node->size = h.size;
      break;
    case HeaderType::kSymlink:
      if (h.link.empty()) return Invalid("a symlink without a target");
      if (h.link.size() >= max_path_) return Invalid("a symlink target of " + std::to_string(h.link.size()) + " bytes");
      node->type = NodeType::kSymlink;
      node->link = h.link;
      break;
    case HeaderType::kHardlink: {
      auto target = HardlinkTarget(h.link, link_path);
      if (!target.ok()) return target.error();
      Node& t = **target;
      node->type = t.type;
      node->layer = t.layer;
      node->entry = t.entry;
      node->size = t.size;
      node->link = t.link;
      node->mode = t.mode;
      // One inode: the chmod after link() changes both names (a symlink's mode stays 0777).
      if (t.type != NodeType::kSymlink) node->mode = t.mode = h.mode;
      break;
    }
    case HeaderType::kOther:
    case HeaderType::kDir:
      node->type = NodeType::kOther;
      break;
  }
  return node;
}

Result<Node*> LayerApplier::HardlinkTarget(const std::string& link, std::string* path) {
  const std::string what = "hardlink to \"" + link + "\"";
  auto comps = LinkComponents(link);
  if (!comps.ok()) return comps.error().Context(what);
  Cursor at(root_, max_path_);
  Node* target = nullptr;
  if (!comps->empty() && comps->back() != "..") {
    std::string base = std::move(comps->back());
    comps->pop_back();
    const std::string where = alone_ ? " in this layer (overlay unpackers link inside it)" : "";
    if (Status st = at.Descend(*comps, /*create=*/false); !st.ok()) {
      return Invalid(what + ": " + st.error().message + where);
    }
    target = at.dir()->Find(base);  // the last name is not followed: link() links a symlink itself
    if (target == nullptr || target->type == NodeType::kWhiteout) return Invalid(what + ": no such file" + where);
    *path = at.PathTo(base);
  }
  if (target == nullptr || target->type == NodeType::kDir) return Invalid(what + ": a folder");
  return target;
}

Status LayerApplier::Whiteout(const Cursor& at, const std::string& name) {
  if (name.empty() || name == "." || name == "..") return Invalid("an invalid whiteout name");
  Node* dir = at.dir();
  if (!alone_) {
    dir->Erase(name);
    return Status::Ok();
  }
  // containerd's overlay whiteout is mknod(2), which fails on a name the layer already made.
  if (dir->Find(name) != nullptr) {
    return Invalid("a whiteout of \"" + at.PathTo(name) + "\", which this layer also writes");
  }
  auto marker = std::make_unique<Node>();
  marker->type = NodeType::kWhiteout;
  dir->Put(name, std::move(marker));
  return Status::Ok();
}

Status LayerApplier::Opaque(const Cursor& at) {
  // overlayfs never looks at the root's opaque xattr, while a merged unpack empties the
  // root: no runtime agrees with another on what is left, so it is refused.
  if (at.at_root()) return Invalid("an opaque whiteout of the root");
  if (alone_) {
    at.dir()->opaque = true;
  } else if (opaque_done_.insert(at.path()).second) {
    ClearUnwritten(*at.dir(), static_cast<int32_t>(layer_));
  }
  return Status::Ok();
}

void OverlayStack(Node& lower, Node& upper) {
  if (upper.opaque) lower.children->clear();
  for (auto& [name, node] : *upper.children) {
    if (node->type == NodeType::kWhiteout) {
      lower.Erase(name);
      continue;
    }
    Node* below = lower.Find(name);
    if (below != nullptr && below->type == NodeType::kDir && node->type == NodeType::kDir) {
      if (node->written_by >= 0) {  // a folder made only as a parent keeps the lower one's metadata
        below->mode = node->mode;
        below->written_by = node->written_by;
      }
      OverlayStack(*below, *node);
      continue;
    }
    DropWhiteouts(*node);
    lower.Put(name, std::move(node));
  }
}

}  // namespace imgtool::rootfs::internal
