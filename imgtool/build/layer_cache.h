// A content-addressed layer cache: the key is the sha256 of a layer's planned inputs
// (every entry's metadata and each source file's size, mtime, inode and device, plus
// compression, epoch and tool version), the value the digests of the blob it produced.
// A hit skips reading, tarring and compressing: an unchanged rebuild only stats files.
//
// Blobs are shared with the output layout by hard link, so the cache costs no copy;
// where a link is impossible (another filesystem) only the digests are kept, and a hit
// then needs the blob to be in the output layout already.
//
// Like make and ninja, the key trusts mtime+size+inode: a file rewritten in place with
// the same size within the same nanosecond would be missed. `--no-cache` rebuilds.
#pragma once

#include <optional>
#include <string>

#include "archive/layer.h"
#include "oci/digest.h"
#include "oci/result.h"

namespace imgtool::build {

class LayerCache {
 public:
  static LayerCache Disabled() { return LayerCache(); }
  // $IMGTOOL_CACHE, else $XDG_CACHE_HOME/imgtool, else $HOME/.cache/imgtool.
  static std::string DefaultDir();
  static Result<LayerCache> Open(const std::string& dir);

  bool enabled() const { return !dir_.empty(); }
  std::optional<archive::WrittenLayer> Lookup(const oci::Digest& key) const;
  // Where a cached blob would be; may not exist (see class comment).
  std::string BlobPath(const oci::Digest& blob) const;
  Status Store(const oci::Digest& key, const archive::WrittenLayer& layer, const std::string& blob_path) const;
  // Small facts kept beside an entry (a package layer's records); nullopt on a miss.
  std::optional<std::string> LookupSidecar(const oci::Digest& key, const std::string& name) const;
  Status StoreSidecar(const oci::Digest& key, const std::string& name, const std::string& content) const;

 private:
  std::string dir_;
};

}  // namespace imgtool::build
