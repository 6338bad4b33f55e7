#include "layout/layout_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

#include "fs/dir_lock.h"
#include "fs/own_file.h"
#include "fs/safe_open.h"
#include "oci/media_types.h"

namespace imgtool::layout {

namespace {

constexpr std::string_view kOciLayoutFile = R"({"imageLayoutVersion":"1.0.0"})";
constexpr uint64_t kMaxIndexBytes = 16 << 20;
// Start writeback of every 32 MiB as it lands, so the commit's fsync finds little left
// to write and the disk works while the source does (Linux only: a hint).
constexpr uint64_t kFlushEvery = 32ull << 20;

Error Errno(ErrorKind kind, const std::string& what) { return MakeError(kind, what + ": " + std::strerror(errno)); }

// An open file read from its start by pread: the caller's descriptor (and its position)
// is borrowed, not moved.
class PreadReader : public oci::Reader {
 public:
  explicit PreadReader(int fd) : fd_(fd) {}
  Result<size_t> Read(void* buf, size_t n) override {
    for (;;) {
      ssize_t k = ::pread(fd_, buf, n, static_cast<off_t>(offset_));
      if (k >= 0) {
        offset_ += static_cast<uint64_t>(k);
        return static_cast<size_t>(k);
      }
      if (errno != EINTR) return Errno(ErrorKind::kInternal, "read");
    }
  }

 private:
  int fd_;
  uint64_t offset_ = 0;
};

// An index.json entry as RemoveIfCreated recognizes its own: tag and digest.
std::string EntryKey(const oci::Descriptor& d) {
  auto it = d.annotations.find(std::string(oci::kAnnotationRefName));
  return (it == d.annotations.end() ? "" : it->second) + "@" + d.digest.str();
}

std::string WithoutTrailingSlash(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

// mkdir of the layout folder itself: true when this call made it.
Result<bool> MakeLayoutDir(const std::string& dir) {
  IMGTOOL_TRY(fs::MakeDirs(fs::DirName(dir)));
  if (::mkdir(dir.c_str(), 0777) == 0) return true;
  if (errno != EEXIST) return Errno(ErrorKind::kInternal, "creating output " + dir);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return MakeError(ErrorKind::kInvalidInput, "output " + dir + ": exists and is not a folder");
  }
  return false;
}

}  // namespace

Result<LayoutWriter> LayoutWriter::Open(const std::string& path) {
  LayoutWriter w;
  w.dir_ = WithoutTrailingSlash(path);
  auto created = MakeLayoutDir(w.dir_);
  if (!created.ok()) return created.error();
  w.created_ = *created;
  // Another writer may be making this layout right now: decide under its lock, or we
  // would see its blobs folder before its oci-layout file and call it "not a layout".
  auto lock = fs::DirLock::Exclusive(w.dir_);
  if (!lock.ok()) return lock.error();
  std::error_code ec;
  bool empty = std::filesystem::is_empty(w.dir_, ec);
  if (ec) return MakeError(ErrorKind::kInternal, "output " + w.dir_ + ": " + ec.message());
  if (!empty && !fs::Exists(w.dir_ + "/oci-layout")) {
    return MakeError(ErrorKind::kInvalidInput,
                     "output " + w.dir_ + ": folder is not empty and is not an OCI layout (no oci-layout file)");
  }
  IMGTOOL_TRY(fs::MakeDirs(w.dir_ + "/blobs/sha256"));
  if (!fs::Exists(w.dir_ + "/oci-layout")) IMGTOOL_TRY(fs::WriteFileAtomic(w.dir_ + "/oci-layout", kOciLayoutFile));
  return w;
}

std::string BlobPathIn(const std::string& dir, const oci::Digest& d) { return dir + "/blobs/sha256/" + d.hex(); }

std::string LayoutWriter::BlobPath(const oci::Digest& d) const { return BlobPathIn(dir_, d); }

bool LayoutWriter::HasBlob(const oci::Digest& d, int64_t size) const {
  uint64_t have = 0;
  return fs::OpenRegularBeneath(dir_, "blobs/sha256/" + d.hex(), &have).ok() && have == static_cast<uint64_t>(size);
}

Result<oci::Descriptor> LayoutWriter::WriteBlob(std::string_view bytes, std::string_view media_type) {
  oci::Descriptor desc;
  desc.media_type = std::string(media_type);
  desc.digest = oci::Digest::Of(bytes);
  desc.size = static_cast<int64_t>(bytes.size());
  if (!HasBlob(desc.digest, desc.size)) IMGTOOL_TRY(fs::WriteFileAtomic(BlobPath(desc.digest), bytes));
  return desc;
}

Status LayoutWriter::OpenBlobFile(fs::AtomicFile& file) const { return file.Open(dir_ + "/blobs/sha256/blob"); }

Status LayoutWriter::CommitBlob(fs::AtomicFile& file, const oci::Digest& d) const { return file.CommitAs(BlobPath(d)); }

Result<uint64_t> LayoutWriter::StreamBlob(oci::Reader& source, const oci::Digest& d,
                                          const std::function<void(uint64_t)>& progress) const {
  fs::AtomicFile out;
  IMGTOOL_TRY(OpenBlobFile(out));
  fs::UniqueFd flush(::open(out.temp_path().c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC));
  std::vector<char> buf(1 << 20);
  uint64_t done = 0, flushed = 0;
  for (;;) {
    auto got = source.Read(buf.data(), buf.size());
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
  // The reader reached its end without an error: its checks passed.
  IMGTOOL_TRY(CommitBlob(out, d));
  return done;
}

Result<ImportedBlob> LayoutWriter::ImportBlob(int fd, const oci::Descriptor& d, ContentCheck check) const {
  const std::string what = "blob " + d.digest.str();
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Errno(ErrorKind::kInternal, "stat " + what);
  if (!S_ISREG(st.st_mode)) return MakeError(ErrorKind::kInvalidInput, what + ": not a regular file; refused");
  if (st.st_size != d.size) {  // worded as CheckedReader words it
    return MakeError(ErrorKind::kIntegrity, what + ": " + std::to_string(st.st_size) + " bytes, " +
                                                (st.st_size > d.size ? "more" : "fewer") + " than the " +
                                                std::to_string(d.size) + " bytes its descriptor names");
  }
  ImportedBlob out;
  // A hard link shares the inode with the source: only a file nobody else can write may
  // be shared, or its owner could change our output after we checked it.
  if (fs::OnlyWeCanWrite(st)) {
    if (check == ContentCheck::kHash) {
      oci::CheckedReader checked(std::make_unique<PreadReader>(fd), d.digest, d.size, what);
      auto n = oci::Drain(checked);
      if (!n.ok()) return n.error();
      out.bytes_hashed = *n;
    }
    if (fs::LinkAtomic(fd, BlobPath(d.digest)).ok()) {
      out.linked = true;
      return out;
    }
    // Another filesystem, or links refused: copy (and hash) instead.
  }
  oci::CheckedReader checked(std::make_unique<PreadReader>(fd), d.digest, d.size, what);
  auto n = StreamBlob(checked, d.digest, nullptr);
  if (!n.ok()) return n.error();
  out.bytes_hashed += *n;
  return out;
}

Status LayoutWriter::UpdateIndex(const std::function<Status(oci::Index&)>& edit) const {
  auto lock = fs::DirLock::Exclusive(dir_);
  if (!lock.ok()) return lock.error();
  oci::Index index;
  auto raw = fs::ReadRegularBeneath(dir_, "index.json", kMaxIndexBytes);
  if (raw.ok()) {
    auto parsed = oci::ParseIndex(*raw, dir_ + "/index.json");
    if (!parsed.ok()) return parsed.error();
    index = std::move(*parsed);
  } else if (raw.error().kind != ErrorKind::kNotFound) {
    return raw.error();
  }
  IMGTOOL_TRY(edit(index));
  auto bytes = oci::SerializeIndex(index);
  if (!bytes.ok()) return bytes.error();
  return fs::WriteFileAtomic(dir_ + "/index.json", *bytes);
}

Status LayoutWriter::SetTag(const oci::Descriptor& manifest, const std::string& tag) const {
  return UpdateIndex([&](oci::Index& index) {
    oci::Descriptor entry = manifest;
    if (!tag.empty()) entry.annotations[std::string(oci::kAnnotationRefName)] = tag;
    std::vector<oci::Descriptor> kept;
    for (const auto& d : index.manifests) {
      auto it = d.annotations.find(std::string(oci::kAnnotationRefName));
      bool same_tag = !tag.empty() && it != d.annotations.end() && it->second == tag;
      bool same_untagged = tag.empty() && it == d.annotations.end() && d.digest == manifest.digest;
      if (!same_tag && !same_untagged) kept.push_back(d);
    }
    kept.push_back(entry);
    index.manifests = std::move(kept);
    std::lock_guard<std::mutex> hold(committed_->mu);
    committed_->entries.insert(EntryKey(entry));
    return Status::Ok();
  });
}

void LayoutWriter::RemoveIfCreated() const {
  if (!created_) return;
  auto lock = fs::DirLock::Exclusive(dir_);
  if (!lock.ok()) return;
  // An entry another writer committed meanwhile keeps the layout: a command that failed
  // must not take a concurrent command's finished image with it.
  auto raw = fs::ReadRegularBeneath(dir_, "index.json", kMaxIndexBytes);
  if (raw.ok()) {
    auto index = oci::ParseIndex(*raw, dir_ + "/index.json");
    if (!index.ok()) return;
    std::lock_guard<std::mutex> hold(committed_->mu);
    for (const auto& d : index->manifests) {
      if (!committed_->entries.count(EntryKey(d))) return;
    }
  } else if (raw.error().kind != ErrorKind::kNotFound) {
    return;
  }
  (void)fs::RemoveTree(dir_);
}

}  // namespace imgtool::layout
