#include "layout/layout_sink.h"

#include "fs/safe_open.h"
#include "layout/layout_reader.h"

namespace imgtool::layout {

Result<std::unique_ptr<LayoutSink>> LayoutSink::Open(const std::string& dir, const std::string& name) {
  auto w = LayoutWriter::Open(dir);
  if (!w.ok()) return w.error().Context(name);
  return std::unique_ptr<LayoutSink>(new LayoutSink(std::move(*w), name));
}

void LayoutSink::Discard() { writer_.RemoveIfCreated(); }

Result<oci::PutOutcome> LayoutSink::PutBlob(const oci::Blob& blob, const std::function<void(uint64_t)>& progress) {
  const oci::Descriptor& d = blob.descriptor();
  if (writer_.HasBlob(d.digest, d.size)) return oci::PutOutcome{"exists", 0, 0};
  if (auto* src = dynamic_cast<const LayoutStore*>(blob.store().get())) {
    auto imported = ImportFromLayout(src->dir(), blob);
    if (imported.ok() || imported.error().kind != ErrorKind::kInternal) return imported;
    // Could not read it there (an I/O error): stream it through the source instead.
  }
  return Stream(blob, progress);
}

// The source file is opened without following anything and imported by its descriptor:
// hashed, then linked when it is ours, else copied while hashed (LayoutWriter::ImportBlob).
Result<oci::PutOutcome> LayoutSink::ImportFromLayout(const std::string& src_dir, const oci::Blob& blob) {
  const oci::Descriptor& d = blob.descriptor();
  auto fd = fs::OpenRegularBeneath(src_dir, "blobs/sha256/" + d.digest.hex());
  if (!fd.ok()) return fd.error().Context("blob " + d.digest.str());
  auto imported = writer_.ImportBlob(fd->get(), d, ContentCheck::kHash);
  if (!imported.ok()) return imported.error();
  if (imported->linked) return oci::PutOutcome{"linked", 0, 0};
  return oci::PutOutcome{"written", static_cast<uint64_t>(d.size), 0};
}

Result<oci::PutOutcome> LayoutSink::Stream(const oci::Blob& blob, const std::function<void(uint64_t)>& progress) {
  auto reader = blob.Open();
  if (!reader.ok()) return reader.error();
  auto done = writer_.StreamBlob(**reader, blob.descriptor().digest, progress);
  if (!done.ok()) return done.error();
  return oci::PutOutcome{"written", *done, 0};
}

Status LayoutSink::PutManifest(const oci::Descriptor& d, const std::string& bytes,
                               const std::optional<std::string>& tag) {
  auto desc = writer_.WriteBlob(bytes, d.media_type);
  if (!desc.ok()) return desc.error();
  if (desc->digest != d.digest) {
    return MakeError(ErrorKind::kIntegrity, "manifest " + d.digest.Short() + ": bytes hash to " + desc->digest.str());
  }
  if (!tag) return Status::Ok();
  oci::Descriptor entry = *desc;
  entry.platform = d.platform;
  entry.artifact_type = d.artifact_type;
  return writer_.SetTag(entry, *tag);
}

}  // namespace imgtool::layout
