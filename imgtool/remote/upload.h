// Blob uploads: monolithic (POST + PUT with the body) for small blobs, chunked PATCH
// with Content-Range for large ones. After every chunk the session (upload URL and
// offset) is saved in a small state file keyed by (registry, repository, digest), so a
// rerun after a kill or a reset asks the registry where the upload stands (GET on the
// session) and continues from there.
//
// The bytes are hashed as they are sent (a resumed upload first hashes what the
// registry already has, from the source), and the final PUT that commits the blob is
// sent only when they match the descriptor's size and sha256: a source that lies is
// refused here, not left to the registry.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "oci/manifest.h"
#include "oci/reader.h"
#include "oci/result.h"
#include "remote/registry.h"

namespace imgtool::remote {

struct UploadOptions {
  uint64_t monolithic_max = 32ull << 20;  // blobs up to this size go in one PUT
  uint64_t chunk_size = 1024ull << 20;    // PATCH size for larger blobs
  std::string state_dir;                  // saved sessions; empty: not saved
};

struct UploadOutcome {
  bool resumed = false;
  uint64_t resumed_from = 0;  // offset the registry confirmed for a saved session
  uint64_t bytes_sent = 0;    // body bytes sent by this run
  bool restarted = false;     // a saved session was unusable and the blob started over
};

// `$IMGTOOL_CACHE/uploads`, else `~/.cache/imgtool/uploads`.
std::string DefaultUploadStateDir();

// `body` must read at offsets (CanReadAt: a file, memory) so a range can be sent again.
Result<UploadOutcome> UploadBlob(Registry& reg, const std::string& repo, const oci::Descriptor& desc, oci::Reader& body,
                                 const UploadOptions& opts, const std::function<void(uint64_t done)>& progress);

// The saved session of an interrupted upload.
struct UploadSession {
  std::string location;
  uint64_t offset = 0;
};
std::string UploadStatePath(const std::string& dir, const std::string& host, const std::string& repo,
                            const oci::Digest& d);
Result<std::optional<UploadSession>> LoadUploadSession(const std::string& path);
Status SaveUploadSession(const std::string& path, const UploadSession& s);

}  // namespace imgtool::remote
