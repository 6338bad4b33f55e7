// The in-memory file tree an unpacker would leave: folders with named children, files
// that point at the tar entry holding their content (never the content itself), symlinks
// with their targets. And the one walk every lookup uses, which follows symlinks inside
// the tree the way the kernel does inside a chroot.
//
// Internal to imgtool/rootfs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "oci/result.h"
#include "rootfs/names.h"

namespace imgtool::rootfs::internal {

// kWhiteout only lives in the tree of one layer unpacked on its own (overlay).
enum class NodeType : uint8_t { kFile, kDir, kSymlink, kOther, kWhiteout };

struct Node {
  NodeType type = NodeType::kDir;
  bool opaque = false;      // a layer's own tree: ".wh..wh..opq" was seen in this folder
  int32_t written_by = -1;  // the layer whose entry wrote this node; -1: a folder made as a parent
  uint32_t mode = 0755;     // 07777
  uint32_t layer = 0;       // non-folders: the entry this node's content or target comes from
  uint64_t entry = 0;       // (a hardlink: its target's entry)
  uint64_t size = 0;        // kFile
  std::string link;         // kSymlink: the target as stored
  std::unique_ptr<std::map<std::string, std::unique_ptr<Node>>> children;  // kDir

  static std::unique_ptr<Node> Dir(uint32_t mode = 0755);
  Node* Find(const std::string& name) const;
  Node* Put(const std::string& name, std::unique_ptr<Node> node);  // replaces any node of that name
  void Erase(const std::string& name);
};

// Symlinks followed in one lookup before ELOOP, as Linux does.
inline constexpr int kMaxHops = 40;

// A position in the tree: the folders from the root down, with their names.
class Cursor {
 public:
  Cursor(Node* root, size_t max_path) : dirs_{root}, max_path_(max_path) {}
  Node* dir() const { return dirs_.back(); }
  bool at_root() const { return dirs_.size() == 1; }
  std::string path() const { return Join(names_); }
  std::string PathTo(const std::string& name) const;
  void Up();  // ".." : never above the root
  void ToRoot();
  Status Enter(Node* child, const std::string& name);  // ENAMETOOLONG past max_path
  Status Room(const std::string& name) const;          // whether `name` here fits max_path

  // Walks `comps` as folders from here, following every symlink (relative targets from
  // the link's folder, absolute ones from the root). `create`: a missing folder is made
  // (mode 0755), as an unpacker's mkdir -p does; else it is kNotFound.
  Status Descend(const Components& comps, bool create);

  // Counts a hop through `link` (named `name` in dir()) and returns its target's
  // components, moving to the root first when the target is absolute.
  Result<Components> Follow(const Node& link, const std::string& name);

 private:
  std::vector<Node*> dirs_;
  Components names_;
  size_t bytes_ = 0;
  size_t max_path_;
  int hops_ = 0;
};

}  // namespace imgtool::rootfs::internal
