// The transfer engine behind `imgtool copy` (push, pull): source -> blobs -> manifests
// -> sink, between an OCI layout (oci:, oci-archive:) and a registry (docker://), in
// any direction. Manifests travel as their exact bytes, so digests never change;
// an index travels with every image it names. Blobs go a few at a time: skipped when
// the destination has them, mounted across repositories of one registry, uploaded
// (resumably) or downloaded (hashed as they stream, committed only when they match).
//
// Not here: printing. Progress arrives as BlobEvents from worker threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "layout/oci_archive.h"
#include "ref/reference.h"
#include "oci/digest.h"
#include "oci/result.h"
#include "remote/registry.h"
#include "remote/upload.h"

namespace imgtool::remote {

struct BlobEvent {
  enum class Kind { kStart, kProgress, kDone };
  Kind kind = Kind::kStart;
  oci::Digest digest;
  std::string media_type;
  int64_t size = 0;
  uint64_t done = 0;   // bytes so far (kProgress, kDone)
  std::string action;  // kDone: exists, mounted, uploaded, resumed, downloaded, linked
};

struct TransferOptions {
  RegistryOptions source;       // used when the source is docker://
  RegistryOptions destination;  // used when the destination is docker://
  UploadOptions upload;
  int jobs = 3;  // blobs in flight at once
  // Called from worker threads (serialize inside if needed).
  std::function<void(const BlobEvent&)> on_blob;
};

struct BlobRecord {
  oci::Digest digest;
  std::string media_type;
  int64_t size = 0;
  std::string action;
  uint64_t bytes_sent = 0;  // bytes that crossed the network for it in this run
  uint64_t resumed_from = 0;
};

struct CopyReport {
  oci::Digest digest;  // of the top manifest (or index)
  std::string media_type;
  std::vector<oci::Digest> manifests;  // every manifest copied, children first
  std::vector<BlobRecord> blobs;
  uint64_t bytes_sent = 0;
};

Result<CopyReport> Copy(const ref::Reference& src, const ref::Reference& dst, const TransferOptions& opts);

// For inspect / digest: the manifest and config of a docker:// image in a temporary
// layout (layers stay remote).
Result<layout::OpenedImage> OpenRemoteImage(const ref::Reference& ref, const RegistryOptions& opts);

}  // namespace imgtool::remote
