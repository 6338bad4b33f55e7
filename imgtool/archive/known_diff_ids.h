// Known diff_ids: for a compressed layer blob (by its sha256), the sha256 and size of its
// decompressed tar, recorded only when this user's imgtool decompressed those very bytes
// itself (a build writing the layer, a verify inflating it) and every gzip/zstd check
// passed. containerd keeps the same fact as the `containerd.io/uncompressed` label.
//
// Why it is sound for verify: the blob is still re-hashed every time, and a blob that
// hashes to D is the same bytes that were decompressed when D's entry was recorded
// (SHA-256 collision resistance), so its decompression hashes to the recorded diff_id.
// Only the record itself is trusted, and only when it is ours (fs/own_file.h): a file
// of this uid that nobody else can write, in such a folder, naming its own blob inside
// (a file renamed or linked under another blob's name is refused).
//
// One small file per blob, `<cache>/diff-ids/<hex>`, written atomically: concurrent
// imgtool processes never merge or lose each other's entries. Everything is best
// effort: an unreadable or untrusted entry is a miss, and the layer is decompressed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "oci/digest.h"

namespace imgtool::archive {

struct KnownDiffId {
  oci::Digest diff_id;
  uint64_t uncompressed_size = 0;
};

class KnownDiffIds {
 public:
  KnownDiffIds() = default;  // disabled: every lookup misses, records are dropped
  // `<cache_dir>/diff-ids`; an empty cache_dir disables.
  static KnownDiffIds In(const std::string& cache_dir);

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }
  std::optional<KnownDiffId> Find(const oci::Digest& blob) const;
  // Records what a decompression of `blob` just produced; errors are ignored (a cache).
  void Record(const oci::Digest& blob, const KnownDiffId& known) const;

 private:
  std::string dir_;
};

}  // namespace imgtool::archive
