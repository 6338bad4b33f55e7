// Path names as the unpackers read them. A tar entry's name is cleaned lexically before
// anything is looked up (containerd: Go's filepath.Clean; umoci: CleanPath), while the
// targets of symlinks are walked a component at a time, as the kernel does.
//
// Internal to imgtool/rootfs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "oci/result.h"

namespace imgtool::rootfs::internal {

using Components = std::vector<std::string>;

// The components of an entry name after the lexical cleaning every unpacker does first:
// "", "." dropped, ".." removes the name before it. A ".." with nothing before it stays at
// the root: containerd's Apply joins the cleaned name to the root with its RootPath, which
// clamps it there ("../../etc/passwd" is written to /etc/passwd); moby refuses such a
// layer, which then never runs. Empty: the root itself (unpackers skip such an entry).
Components CleanName(std::string_view name);

// The components of a symlink target or a hardlink's name, ".." kept, for walking.
// kInvalidInput when a ".." follows a name ("a/../b"): the kernel goes up from where `a`
// leads, containerd's RootPath lexically from where `a` is, so the two can land in
// different places; refusing it keeps every unpacker and the kernel in agreement.
// Leading ".." (from the link's folder, a real folder) means the same to all of them.
Result<Components> LinkComponents(std::string_view target);

inline bool IsAbsolute(std::string_view target) { return !target.empty() && target.front() == '/'; }

// A name as it goes into a message: quoted (escaped), and cut short when absurdly long.
std::string QuoteName(const std::string& name);

// "etc/passwd" from {"etc", "passwd"}.
std::string Join(const Components& c);

// Longest name of one component Linux creates (NAME_MAX); a longer one fails to unpack.
inline constexpr size_t kMaxComponent = 255;

// Empty when every component of `c` fits kMaxComponent, else the first that does not.
std::string TooLongComponent(const Components& c);

}  // namespace imgtool::rootfs::internal
