// Applying layers one header at a time, for a caller that streams them itself: the
// unpacker onto a disk (imgtool/bundle) sees every header once, in order, and must make
// every refusal ImageFs::Build makes before it writes anything for that header. Build
// is this same loop over header scans, so the two cannot drift apart.
//
// Each accepted header comes back as a Placement: where the merged view (umoci's: each
// layer onto the folder holding those below) put it, with every symlink on the way
// already resolved inside the tree. A writer follows no symlink on disk: a name in a
// Placement's folder is always a real folder in the tree, so one met on disk is an error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "archive/layer.h"
#include "oci/image.h"
#include "oci/result.h"
#include "rootfs/image_fs.h"

namespace imgtool::rootfs {

namespace internal {
struct Views;
}

// What one header did to the merged view.
struct Placement {
  enum class Kind {
    kSkip,         // a name that cleans to the root: nothing happens
    kRemove,       // a whiteout: `dir`/`name` and all below it are gone
    kOpaque,       // `.wh..wh..opq`: `dir` keeps only what InMerged still finds below it
    kDirMetadata,  // a folder over a folder: merged, `dir`/`name` takes the header's metadata
    kCreate,       // whatever was at `dir`/`name` is replaced by the header's node
  };
  Kind kind = Kind::kSkip;
  std::string dir;        // "usr/lib" ("": the root); no symlink on the way, parents made
  std::string name;       // one component
  std::string link_path;  // kCreate of a hardlink: the path linked to, symlink-free
  std::string path() const { return dir.empty() ? name : dir + "/" + name; }
};

class Applier {
 public:
  Applier(std::vector<std::shared_ptr<const oci::Layer>> layers, const Limits& limits = {});
  Applier(Applier&&) noexcept;
  Applier& operator=(Applier&&) noexcept;
  ~Applier();

  // Layer `index` begins (layers in order, bottom first).
  void BeginLayer(uint32_t index);
  // One header of the current layer, in tar order, onto both views: kInvalidInput naming
  // layer and entry ("layer sha256:..: entry \"x\": unpacked on its own: why") for
  // anything ImageFs::Build refuses. After an error the Applier is not used again.
  Result<Placement> Apply(const archive::TarHeader& h);
  // The current layer is done (stacks its own tree onto the overlay view).
  void EndLayer();
  // Whether the merged view has a node at `path` ("usr/lib/x"), names not followed.
  bool InMerged(const std::string& path) const;
  // The views built so far, as an ImageFs (the Applier is spent).
  ImageFs Finish() &&;

 private:
  std::unique_ptr<internal::Views> s_;
  struct Layer;
  std::unique_ptr<Layer> layer_;
  uint64_t total_ = 0;
};

}  // namespace imgtool::rootfs
