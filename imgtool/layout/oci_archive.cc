#include "layout/oci_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "fs/safe_open.h"
#include "layout/layout_reader.h"
#include "oci/quote.h"

namespace imgtool::layout {

namespace {

struct ArchiveWriteFree {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct ArchiveReadFree {
  void operator()(archive* a) const { archive_read_free(a); }
};
struct EntryFree {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

// libarchive writes through this into an AtomicFile.
la_ssize_t WriteToAtomic(archive*, void* client, const void* buf, size_t n) {
  auto* f = static_cast<fs::AtomicFile*>(client);
  return f->Write(buf, n).ok() ? static_cast<la_ssize_t>(n) : -1;
}

std::string ArchiveMessage(archive* a, const char* fallback) {
  const char* msg = archive_error_string(a);
  return msg ? msg : fallback;
}

Error ArchiveError(archive* a, const std::string& what) {
  const char* msg = archive_error_string(a);
  return MakeError(ErrorKind::kInternal, what + ": " + (msg ? msg : "libarchive error"));
}

Result<std::vector<std::string>> ListBlobs(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir((dir + "/blobs/sha256").c_str());
  if (!d) return MakeError(ErrorKind::kNotFound, dir + ": blobs/sha256 missing");
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.size() == 64) names.push_back(n);  // skips ".", "..", and temporaries
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

Status AddEntry(archive* a, const std::string& name, const std::string& source, bool is_dir) {
  std::unique_ptr<archive_entry, EntryFree> e(archive_entry_new());
  archive_entry_set_pathname(e.get(), name.c_str());
  archive_entry_set_mtime(e.get(), 0, 0);
  archive_entry_set_uid(e.get(), 0);
  archive_entry_set_gid(e.get(), 0);
  if (is_dir) {
    archive_entry_set_filetype(e.get(), AE_IFDIR);
    archive_entry_set_perm(e.get(), 0755);
    if (archive_write_header(a, e.get()) != ARCHIVE_OK) return ArchiveError(a, "archiving " + name);
    return Status::Ok();
  }
  struct stat st {};
  int fd = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    if (fd >= 0) ::close(fd);
    return MakeError(ErrorKind::kNotFound, "archiving " + source + ": " + std::strerror(errno));
  }
  archive_entry_set_filetype(e.get(), AE_IFREG);
  archive_entry_set_perm(e.get(), 0644);
  archive_entry_set_size(e.get(), st.st_size);
  if (archive_write_header(a, e.get()) != ARCHIVE_OK) {
    ::close(fd);
    return ArchiveError(a, "archiving " + name);
  }
  std::vector<char> buf(1 << 20);
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (archive_write_data(a, buf.data(), static_cast<size_t>(n)) != n) {
      ::close(fd);
      return ArchiveError(a, "archiving " + name);
    }
  }
  ::close(fd);
  return Status::Ok();
}

bool IsHex64(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

Status WriteOciArchive(const std::string& dir, const std::string& archive_path) {
  auto blobs = ListBlobs(dir);
  if (!blobs.ok()) return blobs.error();
  fs::AtomicFile out;
  IMGTOOL_TRY(out.Open(archive_path));
  std::unique_ptr<archive, ArchiveWriteFree> a(archive_write_new());
  archive_write_set_format_pax_restricted(a.get());
  archive_write_set_bytes_in_last_block(a.get(), 1);
  if (archive_write_open2(a.get(), &out, nullptr, WriteToAtomic, nullptr, nullptr) != ARCHIVE_OK) {
    return ArchiveError(a.get(), "writing " + archive_path);
  }
  // Sorted by name, parents first.
  IMGTOOL_TRY(AddEntry(a.get(), "blobs", "", true));
  IMGTOOL_TRY(AddEntry(a.get(), "blobs/sha256", "", true));
  for (const auto& hex : *blobs) IMGTOOL_TRY(AddEntry(a.get(), "blobs/sha256/" + hex, dir + "/blobs/sha256/" + hex, false));
  IMGTOOL_TRY(AddEntry(a.get(), "index.json", dir + "/index.json", false));
  IMGTOOL_TRY(AddEntry(a.get(), "oci-layout", dir + "/oci-layout", false));
  if (archive_write_close(a.get()) != ARCHIVE_OK) return ArchiveError(a.get(), "writing " + archive_path);
  return out.Commit();
}

Status ExtractOciArchive(const std::string& archive_path, const std::string& dest) {
  // The user names the archive: a FIFO there is refused, not waited on.
  auto fd = fs::OpenRegular(archive_path);
  if (!fd.ok()) return fd.error();
  std::unique_ptr<archive, ArchiveReadFree> a(archive_read_new());
  archive_read_support_format_tar(a.get());
  archive_read_support_filter_all(a.get());
  if (archive_read_open_fd(a.get(), fd->get(), 1 << 20) != ARCHIVE_OK) {
    const char* msg = archive_error_string(a.get());
    return MakeError(fs::Exists(archive_path) ? ErrorKind::kInvalidInput : ErrorKind::kNotFound,
                     archive_path + ": " + (msg ? msg : "cannot open"));
  }
  IMGTOOL_TRY(fs::MakeDirs(dest + "/blobs/sha256"));
  archive_entry* e = nullptr;
  int rc;
  while ((rc = archive_read_next_header(a.get(), &e)) == ARCHIVE_OK) {
    std::string name = archive_entry_pathname(e);
    if (name.rfind("./", 0) == 0) name = name.substr(2);
    while (!name.empty() && name.back() == '/') name.pop_back();
    auto type = archive_entry_filetype(e);
    if (type == AE_IFDIR && (name.empty() || name == "blobs" || name == "blobs/sha256")) continue;
    bool blob = name.rfind("blobs/sha256/", 0) == 0 && IsHex64(name.substr(13));
    bool top = name == "index.json" || name == "oci-layout";
    if (type != AE_IFREG || (!blob && !top)) {
      return MakeError(ErrorKind::kInvalidInput,
                       archive_path + ": entry " + oci::Quoted(name, '\'') +
                           " is not part of an OCI layout; refusing the archive");
    }
    fs::AtomicFile f;
    IMGTOOL_TRY(f.Open(dest + "/" + name));
    const void* buf;
    size_t size;
    la_int64_t offset;
    int r;
    while ((r = archive_read_data_block(a.get(), &buf, &size, &offset)) == ARCHIVE_OK) IMGTOOL_TRY(f.Write(buf, size));
    if (r != ARCHIVE_EOF) {
      return MakeError(ErrorKind::kIntegrity, archive_path + ": reading " + name + ": " +
                                                  ArchiveMessage(a.get(), "truncated"));
    }
    IMGTOOL_TRY(f.Commit());
  }
  if (rc != ARCHIVE_EOF) {
    return MakeError(ErrorKind::kIntegrity,
                     archive_path + ": " + ArchiveMessage(a.get(), "truncated or corrupt archive"));
  }
  return Status::Ok();
}

Result<std::unique_ptr<ArchiveSink>> ArchiveSink::Open(const std::string& archive_path, const std::string& name) {
  auto tmp = fs::TempDir::Create("imgtool-archive-out-");
  if (!tmp.ok()) return tmp.error();
  auto keep = std::make_shared<fs::TempDir>(std::move(*tmp));
  if (fs::Exists(archive_path)) IMGTOOL_TRY(ExtractOciArchive(archive_path, keep->path()));
  auto w = LayoutWriter::Open(keep->path());
  if (!w.ok()) return w.error().Context(name);
  return std::unique_ptr<ArchiveSink>(new ArchiveSink(std::move(*w), name, archive_path, keep));
}

Status ArchiveSink::Commit() { return WriteOciArchive(tmp_->path(), path_); }

}  // namespace imgtool::layout
