// An image -> an OCI runtime bundle (DIR/config.json + DIR/rootfs), what runc, crun and
// Slurm's `srun --container=DIR` run. The rootfs is the one `umoci unpack` makes: layers
// applied in order onto one folder (rootfs::Applier's merged view, with every refusal
// ImageFs makes), streamed from the layer blobs, each checked against its digest as it is
// read. config.json is runtime_spec.h's.
//
// Atomic: everything is written under DIR.tmp-XXXXXX beside DIR and renamed into place
// (renameat2 RENAME_NOREPLACE; with `force`, RENAME_EXCHANGE with the old bundle, which
// is then removed), so DIR is either absent, the old bundle, or the whole new one. A
// failure or a cancel removes the temporary folder.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bundle/disk_writer.h"
#include "oci/digest.h"
#include "oci/image.h"
#include "oci/result.h"
#include "rootfs/image_fs.h"

namespace imgtool::bundle {

struct UnpackOptions {
  bool chown = false;                         // give nodes the headers' owners (needs root)
  bool force = false;                         // replace an existing bundle at DIR (one with a config.json)
  const std::atomic<bool>* cancel = nullptr;  // set (by a signal handler): stop, clean up
  rootfs::Limits limits;
};

struct UnpackReport {
  std::string bundle;  // DIR
  std::string rootfs;  // DIR/rootfs
  oci::Digest image;
  oci::Digest config;
  uint64_t layers = 0;
  uint64_t files = 0;  // nodes in the rootfs (every name: files, folders, links)
  uint64_t bytes = 0;  // regular file content written
  uint64_t xattrs_skipped = 0;
  std::string config_json;  // the bytes written to DIR/config.json
};

// Streams `layers` (bottom first) onto `rootfs_fd` (an empty folder), each read once
// through rootfs::Applier to the DiskWriter, folders' metadata set at the end: the
// views built on the way, and what the writer counted in `stats`. What UnpackRootfs does
// for an image's layers; the unit tests and the fuzz harness call it on layers of their own.
Result<rootfs::ImageFs> UnpackLayers(const std::vector<std::shared_ptr<const oci::Layer>>& layers, int rootfs_fd,
                                     const UnpackOptions& options, WriterStats* stats);

// Streams the image's layers onto `rootfs_fd` (an empty folder). `fs`: the views built
// on the way (the account files are read through it).
Result<UnpackReport> UnpackRootfs(const oci::Image& image, int rootfs_fd, const UnpackOptions& options,
                                  std::optional<rootfs::ImageFs>* fs);

Result<UnpackReport> WriteBundle(const oci::Image& image, const std::string& dir, const UnpackOptions& options);

}  // namespace imgtool::bundle
