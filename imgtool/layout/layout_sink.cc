#include "layout/layout_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <vector>

#include "fs/safe_open.h"
#include "layout/layout_reader.h"

namespace imgtool::layout {

namespace {

// Start writeback of every 32 MiB as it lands, so the commit's fsync finds little left
// to write and the disk works while the source does (Linux only: a hint).
constexpr uint64_t kFlushEvery = 32ull << 20;

}  // namespace

Result<std::unique_ptr<LayoutSink>> LayoutSink::Open(const std::string& dir, const std::string& name) {
  bool created = !fs::Exists(dir);
  auto w = LayoutWriter::Open(dir);
  if (!w.ok()) return w.error().Context(name);
  return std::unique_ptr<LayoutSink>(new LayoutSink(std::move(*w), name, created));
}

void LayoutSink::Discard() {
  if (created_) (void)fs::RemoveTree(writer_.dir());
}

Result<oci::PutOutcome> LayoutSink::PutBlob(const oci::Blob& blob, const std::function<void(uint64_t)>& progress) {
  const oci::Descriptor& d = blob.descriptor();
  if (writer_.HasBlob(d.digest, d.size)) return oci::PutOutcome{"exists", 0, 0};
  if (auto* src = dynamic_cast<const LayoutStore*>(blob.store().get())) {
    auto linked = LinkFromLayout(src->dir(), blob);
    if (linked.ok() || linked.error().kind != ErrorKind::kInternal) return linked;
    // Another filesystem, or links refused: copy the bytes instead.
  }
  return Stream(blob, progress);
}

// The source file is hashed through the descriptor check first; only that same open
// file (by its descriptor, not its name) is then linked into place.
Result<oci::PutOutcome> LayoutSink::LinkFromLayout(const std::string& src_dir, const oci::Blob& blob) {
  const oci::Descriptor& d = blob.descriptor();
  auto fd = fs::OpenRegularBeneath(src_dir, "blobs/sha256/" + d.digest.hex());
  if (!fd.ok()) return fd.error().Context("blob " + d.digest.str());
  int raw_fd = fd->get();
  oci::CheckedReader checked(std::make_unique<fs::FdReader>(std::move(*fd)), d.digest, d.size,
                             "blob " + d.digest.str());
  auto n = oci::Drain(checked);
  if (!n.ok()) return n.error();
  std::string tmp = writer_.BlobPath(d.digest) + ".link-" + std::to_string(::getpid());
  ::unlink(tmp.c_str());
  std::string proc = "/proc/self/fd/" + std::to_string(raw_fd);
  if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW) != 0) {
    return MakeError(ErrorKind::kInternal, "linking blob " + d.digest.Short());
  }
  if (::rename(tmp.c_str(), writer_.BlobPath(d.digest).c_str()) != 0) {
    ::unlink(tmp.c_str());
    return MakeError(ErrorKind::kInternal, "placing blob " + d.digest.Short());
  }
  IMGTOOL_TRY(fs::FsyncDir(writer_.dir() + "/blobs/sha256"));
  return oci::PutOutcome{"linked", 0, 0};
}

Result<oci::PutOutcome> LayoutSink::Stream(const oci::Blob& blob, const std::function<void(uint64_t)>& progress) {
  const oci::Descriptor& d = blob.descriptor();
  auto reader = blob.Open();
  if (!reader.ok()) return reader.error();
  fs::AtomicFile out;
  IMGTOOL_TRY(writer_.OpenBlobFile(out));
  fs::UniqueFd flush(::open(out.temp_path().c_str(), O_WRONLY | O_CLOEXEC));
  std::vector<char> buf(1 << 20);
  uint64_t done = 0, flushed = 0;
  for (;;) {
    auto got = (*reader)->Read(buf.data(), buf.size());
    if (!got.ok()) return got.error();
    if (*got == 0) break;
    IMGTOOL_TRY(out.Write(buf.data(), *got));
    done += *got;
    if (flush && done - flushed >= kFlushEvery) {
      ::sync_file_range(flush.get(), static_cast<off_t>(flushed), static_cast<off_t>(done - flushed),
                        SYNC_FILE_RANGE_WRITE);
      flushed = done;
    }
    if (progress) progress(done);
  }
  // The reader reached its end without an error: size and sha256 matched.
  IMGTOOL_TRY(writer_.CommitBlob(out, d.digest));
  return oci::PutOutcome{"written", done, 0};
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
