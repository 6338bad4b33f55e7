// A content-addressed layer cache: the key is the sha256 of a layer's planned inputs
// (every entry's metadata and each source file's size, mtime, inode and device, plus
// compression, epoch and tool version), the value the digests of the blob it produced.
// A hit skips reading, tarring and compressing: an unchanged rebuild only stats files.
//
// Layout of the folder:
//   layers/<key>.json      the entry (its own key inside: an entry renamed is a miss)
//   layers/<key>.<name>    sidecars (a package layer's records)
//   blobs/sha256/<hex>     the blobs, shared with output layouts by hard link
//   hashed/<hex>           the blob's stat identity when it was last hashed
//
// Nothing in the folder is trusted by name. Entries, sidecars and identity records are
// read only from regular files of ours that nobody else can write, opened without
// following any symlink (fs::ReadOwnFileBeneath). A blob is opened the same way (a
// symlink, FIFO, device or folder there is a miss, never read) and placed into the
// output by LayoutWriter::ImportBlob: hard-linked only when it is ours and nobody else
// can write it, hashed first unless its stat identity (device, inode, size, mtime,
// ctime: fs/file_identity.h) is the one recorded when it was last hashed, and copied
// (hashed as it is copied) otherwise. Content other than its digest is a miss: the
// layer is built again and the cache's blob replaced. So a warm build into a new
// layout reads no blob it already hashed, and a blob altered since is read in full.
// Where a link is impossible (another filesystem) only the digests are kept, and a hit
// then needs the blob to be in the output layout already.
//
// Concurrent builds share the folder: every file is written under a unique temporary
// name and renamed into place, so a reader sees a whole old or a whole new file.
//
// Like make and ninja, the key trusts mtime+size+inode: a file rewritten in place with
// the same size within the same nanosecond would be missed. `--no-cache` rebuilds.
#pragma once

#include <optional>
#include <string>

#include "archive/layer.h"
#include "layout/layout_writer.h"
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
  // The entry for `key`; nullopt for a miss (none, damaged, not ours, another key's).
  std::optional<archive::WrittenLayer> Lookup(const oci::Digest& key) const;
  // Ok when the cache holds `layer`'s blob with its content (see the class comment);
  // else the reason it does not, for the build's progress output.
  Status CheckBlob(const archive::WrittenLayer& layer) const;
  // Places `layer`'s blob into `out`; an error says why the cache cannot (a miss).
  Status PlaceBlob(const archive::WrittenLayer& layer, const layout::LayoutWriter& out) const;
  // Records `layer` under `key`, its blob linked from `out`, where it was just written.
  Status Store(const oci::Digest& key, const archive::WrittenLayer& layer, const layout::LayoutWriter& out) const;
  // Small facts kept beside an entry (a package layer's records); nullopt on a miss.
  std::optional<std::string> LookupSidecar(const oci::Digest& key, const std::string& name) const;
  Status StoreSidecar(const oci::Digest& key, const std::string& name, const std::string& content) const;

 private:
  struct OpenedBlob;
  Result<OpenedBlob> OpenBlob(const archive::WrittenLayer& layer) const;
  void RecordHashed(const oci::Digest& blob, int fd) const;

  std::string dir_;
};

}  // namespace imgtool::build
