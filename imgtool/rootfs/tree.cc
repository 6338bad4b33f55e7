#include "rootfs/tree.h"

namespace imgtool::rootfs::internal {

std::unique_ptr<Node> Node::Dir(uint32_t mode) {
  auto n = std::make_unique<Node>();
  n->mode = mode;
  n->children = std::make_unique<std::map<std::string, std::unique_ptr<Node>>>();
  return n;
}

Node* Node::Find(const std::string& name) const {
  if (!children) return nullptr;
  auto it = children->find(name);
  return it == children->end() ? nullptr : it->second.get();
}

Node* Node::Put(const std::string& name, std::unique_ptr<Node> node) {
  auto& slot = (*children)[name];
  slot = std::move(node);
  return slot.get();
}

void Node::Erase(const std::string& name) {
  if (children) children->erase(name);
}

std::string Cursor::PathTo(const std::string& name) const {
  std::string p = path();
  return p.empty() ? name : p + "/" + name;
}

void Cursor::Up() {
  if (at_root()) return;
  bytes_ -= names_.back().size() + 1;
  dirs_.pop_back();
  names_.pop_back();
}

void Cursor::ToRoot() {
  dirs_.resize(1);
  names_.clear();
  bytes_ = 0;
}

Status Cursor::Room(const std::string& name) const {
  if (bytes_ + name.size() + 1 <= max_path_) return Status::Ok();
  return MakeError(ErrorKind::kInvalidInput,
                   "\"" + PathTo(name) + "\": longer than " + std::to_string(max_path_) + " bytes");
}

Status Cursor::Enter(Node* child, const std::string& name) {
  IMGTOOL_TRY(Room(name));
  bytes_ += name.size() + 1;
  dirs_.push_back(child);
  names_.push_back(name);
  return Status::Ok();
}

Result<Components> Cursor::Follow(const Node& link, const std::string& name) {
  if (++hops_ > kMaxHops) {
    return MakeError(ErrorKind::kInvalidInput,
                     "\"" + PathTo(name) + "\": too many levels of symbolic links (" + std::to_string(kMaxHops) + ")");
  }
  auto target = LinkComponents(link.link);
  if (!target.ok()) return target.error().Context("symlink \"" + PathTo(name) + "\"");
  if (IsAbsolute(link.link)) ToRoot();
  return target;
}

Status Cursor::Descend(const Components& comps, bool create) {
  // Reversed, so the next component is at the back and a link's target goes in front cheaply.
  Components pending(comps.rbegin(), comps.rend());
  while (!pending.empty()) {
    std::string name = std::move(pending.back());
    pending.pop_back();
    if (name == "..") {
      Up();
      continue;
    }
    Node* child = dir()->Find(name);
    if (child == nullptr) {
      if (!create) return MakeError(ErrorKind::kNotFound, "\"" + PathTo(name) + "\" does not exist");
      child = dir()->Put(name, Node::Dir());
    }
    if (child->type == NodeType::kSymlink) {
      auto target = Follow(*child, name);
      if (!target.ok()) return target.error();
      pending.insert(pending.end(), target->rbegin(), target->rend());
      continue;
    }
    if (child->type != NodeType::kDir) {
      return MakeError(create ? ErrorKind::kInvalidInput : ErrorKind::kNotFound,
                       "\"" + PathTo(name) + "\" is not a folder");
    }
    IMGTOOL_TRY(Enter(child, name));
  }
  return Status::Ok();
}

}  // namespace imgtool::rootfs::internal
