// The build's private blob store: an OCI layout folder where the builder writes each
// layer as it streams out of the compressor, the configs, the manifests, the index and
// the SBOM artifacts, before transport::Write hands them to the output's sink
// (oci/sink.h). Where the sink offers a staging folder (a layout: the layout itself; an
// oci-archive: the folder it tars on Commit) the store is that folder, so the sink finds
// every blob already there and nothing is copied twice; elsewhere (a registry, a
// docker-archive) it is a temporary folder under $TMPDIR, removed with the store.
// The layer cache links into and out of the store as it did into the layout.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "fs/atomic_file.h"
#include "layout/layout_writer.h"
#include "oci/image.h"
#include "oci/sink.h"

namespace imgtool::build {

class BlobStore {
 public:
  static Result<BlobStore> For(const oci::Sink& sink);

  layout::LayoutWriter& writer() { return *writer_; }
  const std::string& dir() const { return writer_->dir(); }
  // What the store holds under `d`, opened as transport::Write reads a source.
  Result<oci::Node> Open(const oci::Descriptor& d) const;

 private:
  BlobStore(std::unique_ptr<fs::TempDir> temp, layout::LayoutWriter writer)
      : temp_(std::move(temp)), writer_(std::move(writer)) {}

  std::unique_ptr<fs::TempDir> temp_;  // null when staging in the sink's own folder
  std::optional<layout::LayoutWriter> writer_;
};

}  // namespace imgtool::build
