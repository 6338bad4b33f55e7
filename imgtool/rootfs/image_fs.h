// One filesystem view of an image, as a runtime would see it once unpacked: every
// layer's tar headers are read once and applied in order (image-spec layer.md: names
// cleaned, whiteouts, opaque folders, later entries replacing earlier ones, hardlinks),
// and paths resolve the way the kernel resolves them in a chroot (symlinks followed,
// absolute targets from the root, ".." never above it, ELOOP after 40 hops). Contents
// are not held: a file read streams its one layer again.
//
// Runtimes unpack in two ways that disagree on crafted layers (unpack.h): overlayfs
// snapshotters unpack each layer on its own, umoci and native snapshotters unpack each
// layer onto the ones below. Both views are built; Resolve and ReadFile answer only when
// they agree, and fail closed (kIntegrity, both answers named) when they do not.
//
// Not here: which files a rule reads (policy/gather.cc, builder/builder.cc), or unpacking
// onto a disk.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "oci/image.h"
#include "oci/result.h"

namespace imgtool::rootfs {

namespace internal {
struct Views;
}

enum class Unpacker {
  kOverlay,  // each layer on its own, stacked by overlayfs (containerd's default, docker overlay2)
  kMerged,   // each layer onto the folder holding those below (umoci, containerd native)
};

enum class FileType { kFile, kDir, kSymlink, kOther };  // kOther: device nodes, FIFOs

struct FileInfo {
  std::string path;  // where it is, symlinks resolved: "etc/passwd" (the root: "")
  FileType type = FileType::kDir;
  uint32_t mode = 0;         // 07777
  uint64_t size = 0;         // kFile
  std::string link;          // kSymlink: the target as stored
  std::string layer;         // not folders: digest of the layer whose entry holds the content,
  uint32_t layer_index = 0;  // its position in the image (0: the bottom layer)
  uint64_t entry = 0;        // and the entry's position in that layer's tar
};

// A header with a setuid or setgid bit that is not a folder, wherever it ends up.
struct SetuidEntry {
  std::string layer;  // digest
  std::string path;   // the entry's name, cleaned: "usr/bin/passwd"
  uint32_t mode = 0;
};

struct Limits {
  // Headers in all layers together (so also in any one). Each costs about 320 bytes of
  // memory for the two views (measured: 200,000 files in 64 MB).
  uint64_t max_entries = 1'000'000;
  // PATH_MAX: a longer name, symlink target or resolved path does not unpack on Linux.
  size_t max_path = 4096;
};

class ImageFs {
 public:
  // Streams every layer once (checked against its digest). kInvalidInput naming the layer
  // and the entry for a layer no runtime would unpack, or past the limits.
  static Result<ImageFs> Build(const oci::Image& image, const Limits& limits = {});
  // The same from layers in order, bottom first (fuzzing: blobs in an oci::MemoryStore).
  static Result<ImageFs> Build(std::vector<std::shared_ptr<const oci::Layer>> layers, const Limits& limits = {});

  ImageFs(ImageFs&&) noexcept;
  ImageFs& operator=(ImageFs&&) noexcept;
  ~ImageFs();

  // What `path` ("/etc/passwd", "etc/passwd") names in one view, every symlink followed.
  // kNotFound when nothing is there (or a folder on the way is not one).
  Result<FileInfo> Stat(Unpacker view, const std::string& path) const;
  // Stat in both views; kIntegrity when they name different things.
  Result<FileInfo> Resolve(const std::string& path) const;
  // The content of the regular file a runtime opens at `path`: kNotFound when none,
  // kInvalidInput when it is not a regular file or is larger than max_bytes, kIntegrity
  // when the views disagree on its content.
  Result<std::string> ReadFile(const std::string& path, uint64_t max_bytes) const;
  // Every node of one view's final tree (symlinks not followed), parents before
  // children, names in byte order.
  void Walk(Unpacker view, const std::function<void(const FileInfo&)>& visit) const;
  // Every setuid/setgid non-folder header of every layer, in order, including those a
  // later layer deleted or replaced (noSetuid judges what the image ships).
  const std::vector<SetuidEntry>& setuid_entries() const;

 private:
  friend class Applier;  // builds the views (applier.h)
  explicit ImageFs(std::unique_ptr<internal::Views> state);
  std::unique_ptr<internal::Views> state_;
};

}  // namespace imgtool::rootfs
