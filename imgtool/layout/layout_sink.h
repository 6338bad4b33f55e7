// The layout as a destination (oci.Sink): blobs streamed from any source into
// blobs/sha256 (checked while they stream, renamed into place only when they match),
// manifests as blobs, and the top manifest's tag in index.json, written last (under the
// layout's lock: LayoutWriter::UpdateIndex). A blob that comes from another layout is
// opened there without following anything, hashed, and hard-linked when it is ours
// (else copied): LayoutWriter::ImportBlob. An oci-archive destination is this sink over a temporary folder, tarred on
// Commit (oci_archive.h).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "layout/layout_writer.h"
#include "oci/sink.h"

namespace imgtool::layout {

class LayoutSink : public oci::Sink {
 public:
  // Opens (or creates) the layout `dir`; `name` starts messages.
  static Result<std::unique_ptr<LayoutSink>> Open(const std::string& dir, const std::string& name);

  std::string name() const override { return name_; }
  Result<oci::PutOutcome> PutBlob(const oci::Blob& blob, const std::function<void(uint64_t)>& progress) override;
  Status PutManifest(const oci::Descriptor& d, const std::string& bytes,
                     const std::optional<std::string>& tag) override;
  Status Commit() override { return Status::Ok(); }
  // Removes the folder when this sink's Open created it and nothing is tagged there.
  void Discard() override;
  // The layout itself (for an archive, the folder tarred on Commit).
  std::string StagingDir() const override { return writer_.dir(); }
  const LayoutWriter& writer() const { return writer_; }

 protected:
  LayoutSink(LayoutWriter writer, std::string name) : writer_(std::move(writer)), name_(std::move(name)) {}

 private:
  Result<oci::PutOutcome> ImportFromLayout(const std::string& src_dir, const oci::Blob& blob);
  Result<oci::PutOutcome> Stream(const oci::Blob& blob, const std::function<void(uint64_t)>& progress);

  LayoutWriter writer_;
  std::string name_;
};

}  // namespace imgtool::layout
