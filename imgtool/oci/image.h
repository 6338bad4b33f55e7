// The small read-only views every source provides (go-containerregistry's v1.Layer and
// v1.Image): accessors only, no I/O policy. A layout on disk, an oci-archive and (later)
// a registry all hand out these.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "oci/canonical_json.h"
#include "oci/digest.h"
#include "oci/manifest.h"
#include "oci/result.h"

namespace imgtool::oci {

class Layer {
 public:
  virtual ~Layer() = default;
  virtual Digest digest() const = 0;    // of the blob as stored
  virtual Digest diff_id() const = 0;   // of the uncompressed tar, from the config
  virtual int64_t size() const = 0;
  virtual std::string media_type() const = 0;
  // A local file holding the blob as stored (sources that are remote fetch it first).
  virtual Result<std::string> BlobPath() const = 0;
};

class Image {
 public:
  virtual ~Image() = default;
  virtual const std::string& raw_manifest() const = 0;
  virtual const std::string& raw_config() const = 0;
  virtual const Manifest& manifest() const = 0;
  virtual const Json& config() const = 0;
  virtual std::vector<std::shared_ptr<const Layer>> layers() const = 0;
  Digest digest() const { return Digest::Of(raw_manifest()); }
};

}  // namespace imgtool::oci
