#include "layout/oci_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "archive/archive_library.h"
#include "fs/dir_lock.h"
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

bool IsHex64(const std::string& s) {
  return s.size() == 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

Result<std::vector<std::string>> ListBlobs(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir((dir + "/blobs/sha256").c_str());
  if (!d) return MakeError(ErrorKind::kNotFound, dir + ": blobs/sha256 missing");
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (IsHex64(n)) names.push_back(n);  // skips ".", "..", and temporaries
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// An entry as every one of ours is: mtime 0, owner 0:0.
std::unique_ptr<archive_entry, EntryFree> NewEntry(const std::string& name, unsigned type, int perm) {
  std::unique_ptr<archive_entry, EntryFree> e(archive_entry_new());
  archive_entry_set_pathname(e.get(), name.c_str());
  archive_entry_set_mtime(e.get(), 0, 0);
  archive_entry_set_uid(e.get(), 0);
  archive_entry_set_gid(e.get(), 0);
  archive_entry_set_filetype(e.get(), type);
  archive_entry_set_perm(e.get(), perm);
  return e;
}

Status AddFolder(archive* a, const std::string& name) {
  auto e = NewEntry(name, AE_IFDIR, 0755);
  if (archive_write_header(a, e.get()) != ARCHIVE_OK) return ArchiveError(a, "archiving " + name);
  return Status::Ok();
}

// The layout's file `name`, opened without following anything (a symlink or FIFO there
// is refused, never archived); a blob's bytes are hashed as they are archived and must
// be the digest its name says, or the archive is not committed.
Status AddFile(archive* a, const std::string& dir, const std::string& name, const std::optional<oci::Digest>& digest) {
  uint64_t size = 0;
  auto fd = fs::OpenRegularBeneath(dir, name, &size);
  if (!fd.ok()) return fd.error().Context("archiving");
  auto e = NewEntry(name, AE_IFREG, 0644);
  archive_entry_set_size(e.get(), static_cast<la_int64_t>(size));
  if (archive_write_header(a, e.get()) != ARCHIVE_OK) return ArchiveError(a, "archiving " + name);
  std::unique_ptr<oci::Reader> reader = std::make_unique<fs::FdReader>(std::move(*fd));
  if (digest) {
    reader = std::make_unique<oci::CheckedReader>(std::move(reader), *digest, static_cast<int64_t>(size),
                                                  "archiving " + dir + "/" + name);
  }
  std::vector<char> buf(1 << 20);
  for (;;) {
    auto n = reader->Read(buf.data(), buf.size());
    if (!n.ok()) return n.error();
    if (*n == 0) return Status::Ok();
    if (archive_write_data(a, buf.data(), *n) != static_cast<la_ssize_t>(*n)) {
      return ArchiveError(a, "archiving " + name);
    }
  }
}

// What ExtractOciArchive does with an entry, or why the archive is refused ("" to take it).
struct EntryVerdict {
  bool extract = false;
  std::string refused;
};

// A name as it reads inside the layout: "./" prefixes (tar's "tar -C DIR .") and trailing
// slashes of folders dropped.
std::string LayoutName(std::string name) {
  while (name.rfind("./", 0) == 0) name.erase(0, 2);
  while (!name.empty() && name.back() == '/') name.pop_back();
  return name;
}

bool ClimbsOut(const std::string& name) {
  size_t start = 0;
  for (;;) {
    size_t end = name.find('/', start);
    if (name.compare(start, end == std::string::npos ? std::string::npos : end - start, "..") == 0) return true;
    if (end == std::string::npos) return false;
    start = end + 1;
  }
}

// Extracted: index.json, oci-layout and blobs/sha256/<64 hex>, as regular files. Skipped
// unread: every other regular file or folder, what containerd's export and docker save
// (since Docker 25) write beside the layout (manifest.json, repositories) and other
// digest algorithms' blobs; skopeo and crane read such archives as the layout they hold.
// Refused, whatever the name: links, devices and FIFOs (nothing in a layout is one, and
// none is ever created), names that are absolute, climb out with "..", or hold a control
// character, and a layout's name with another type (a folder index.json).
EntryVerdict VerdictFor(const std::string& name, unsigned type) {
  if (type != AE_IFREG && type != AE_IFDIR) return {false, "not a regular file or folder"};
  if (name.rfind('/', 0) == 0) return {false, "an absolute name"};
  if (ClimbsOut(name)) return {false, "a name with a '..' part"};
  if (std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    return {false, "a control character in its name"};
  }
  bool folder = name.empty() || name == "blobs" || name == "blobs/sha256";
  bool file =
      name == "index.json" || name == "oci-layout" || (name.rfind("blobs/sha256/", 0) == 0 && IsHex64(name.substr(13)));
  if (!folder && !file) return {false, ""};
  if ((type == AE_IFDIR) != folder) {
    return {false, folder ? "a file where the layout has a folder" : "a folder where the layout has a file"};
  }
  return {file, ""};
}

}  // namespace

Status WriteOciArchive(const std::string& dir, const std::string& archive_path) {
  auto blobs = ListBlobs(dir);
  if (!blobs.ok()) return blobs.error();
  fs::AtomicFile out;
  IMGTOOL_TRY(out.Open(archive_path));
  IMGTOOL_TRY(libarchive::Load());
  std::unique_ptr<archive, ArchiveWriteFree> a(archive_write_new());
  archive_write_set_format_pax_restricted(a.get());
  archive_write_set_bytes_in_last_block(a.get(), 1);
  if (archive_write_open2(a.get(), &out, nullptr, WriteToAtomic, nullptr, nullptr) != ARCHIVE_OK) {
    return ArchiveError(a.get(), "writing " + archive_path);
  }
  // Sorted by name, parents first.
  IMGTOOL_TRY(AddFolder(a.get(), "blobs"));
  IMGTOOL_TRY(AddFolder(a.get(), "blobs/sha256"));
  for (const auto& hex : *blobs) {
    auto digest = oci::Digest::Parse("sha256:" + hex);
    if (!digest.ok()) return digest.error();
    IMGTOOL_TRY(AddFile(a.get(), dir, "blobs/sha256/" + hex, *digest));
  }
  IMGTOOL_TRY(AddFile(a.get(), dir, "index.json", std::nullopt));
  IMGTOOL_TRY(AddFile(a.get(), dir, "oci-layout", std::nullopt));
  if (archive_write_close(a.get()) != ARCHIVE_OK) return ArchiveError(a.get(), "writing " + archive_path);
  return out.Commit();
}

Status ExtractOciArchive(const std::string& archive_path, const std::string& dest) {
  // The user names the archive: a FIFO there is refused, not waited on.
  auto fd = fs::OpenRegular(archive_path);
  if (!fd.ok()) return fd.error();
  IMGTOOL_TRY(libarchive::Load());
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
    const char* path = archive_entry_pathname(e);
    std::string name = LayoutName(path ? path : "");
    EntryVerdict verdict = VerdictFor(name, archive_entry_filetype(e));
    if (!verdict.refused.empty()) {
      return MakeError(ErrorKind::kInvalidInput, archive_path + ": entry " + oci::Quoted(name, '\'') +
                                                     " is not part of an OCI layout (" + verdict.refused +
                                                     "); refusing the archive");
    }
    if (!verdict.extract) continue;  // libarchive skips the data of an entry left unread
    fs::AtomicFile f;
    IMGTOOL_TRY(f.Open(dest + "/" + name));
    const void* buf;
    size_t size;
    la_int64_t offset;
    int r;
    while ((r = archive_read_data_block(a.get(), &buf, &size, &offset)) == ARCHIVE_OK) IMGTOOL_TRY(f.Write(buf, size));
    if (r != ARCHIVE_EOF) {
      return MakeError(ErrorKind::kIntegrity,
                       archive_path + ": reading " + name + ": " + ArchiveMessage(a.get(), "truncated"));
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
  // Held from reading the archive to renaming the new one into place: a concurrent
  // writer of the same archive waits, then reads what this one wrote.
  auto lock = fs::DirLock::Exclusive(fs::DirName(archive_path));
  if (!lock.ok()) return lock.error().Context(name);
  auto tmp = fs::TempDir::Create("imgtool-archive-out-");
  if (!tmp.ok()) return tmp.error();
  auto keep = std::make_shared<fs::TempDir>(std::move(*tmp));
  if (fs::Exists(archive_path)) IMGTOOL_TRY(ExtractOciArchive(archive_path, keep->path()));
  auto w = LayoutWriter::Open(keep->path());
  if (!w.ok()) return w.error().Context(name);
  return std::unique_ptr<ArchiveSink>(new ArchiveSink(std::move(*w), name, archive_path, keep, std::move(*lock)));
}

Status ArchiveSink::Commit() {
  Status st = WriteOciArchive(tmp_->path(), path_);
  lock_ = fs::DirLock();
  return st;
}

}  // namespace imgtool::layout
