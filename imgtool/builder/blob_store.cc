#include "builder/blob_store.h"

#include "layout/layout_reader.h"

namespace imgtool::build {

Result<BlobStore> BlobStore::For(const oci::Sink& sink) {
  std::unique_ptr<fs::TempDir> temp;
  std::string dir = sink.StagingDir();
  if (dir.empty()) {
    auto t = fs::TempDir::Create("imgtool-build-");
    if (!t.ok()) return t.error();
    temp = std::make_unique<fs::TempDir>(std::move(*t));
    dir = temp->path();
  }
  auto writer = layout::LayoutWriter::Open(dir);
  if (!writer.ok()) return writer.error().Context("build staging");
  return BlobStore(std::move(temp), std::move(*writer));
}

Result<oci::Node> BlobStore::Open(const oci::Descriptor& d) const {
  auto store = std::make_shared<layout::LayoutStore>(dir(), "build staging");
  return oci::OpenNode(store, d);
}

}  // namespace imgtool::build
