#include "layout/layout_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "oci/media_types.h"

namespace imgtool::layout {

namespace {
constexpr std::string_view kOciLayoutFile = R"({"imageLayoutVersion":"1.0.0"})";
}

Result<LayoutWriter> LayoutWriter::Open(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      return MakeError(ErrorKind::kInvalidInput, "output " + dir + ": exists and is not a folder");
    }
    bool empty = std::filesystem::is_empty(dir);
    if (!empty && !fs::Exists(dir + "/oci-layout")) {
      return MakeError(ErrorKind::kInvalidInput,
                       "output " + dir + ": folder is not empty and is not an OCI layout (no oci-layout file)");
    }
  }
  IMGTOOL_TRY(fs::MakeDirs(dir + "/blobs/sha256"));
  if (!fs::Exists(dir + "/oci-layout")) IMGTOOL_TRY(fs::WriteFileAtomic(dir + "/oci-layout", kOciLayoutFile));
  LayoutWriter w;
  w.dir_ = dir;
  return w;
}

std::string BlobPathIn(const std::string& dir, const oci::Digest& d) { return dir + "/blobs/sha256/" + d.hex(); }

std::string LayoutWriter::BlobPath(const oci::Digest& d) const { return BlobPathIn(dir_, d); }

bool LayoutWriter::HasBlob(const oci::Digest& d, int64_t size) const {
  struct stat st {};
  return ::stat(BlobPath(d).c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == size;
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

Status LayoutWriter::CommitBlob(fs::AtomicFile& file, const oci::Digest& d) const {
  return file.CommitAs(BlobPath(d));
}

Status LayoutWriter::ImportBlob(const std::string& path, const oci::Digest& d) const {
  std::string target = BlobPath(d);
  std::string tmp = target + ".import-" + std::to_string(::getpid());
  ::unlink(tmp.c_str());
  if (::link(path.c_str(), tmp.c_str()) != 0) {
    std::error_code ec;
    std::filesystem::copy_file(path, tmp, ec);
    if (ec) return MakeError(ErrorKind::kInternal, "copying blob " + d.Short() + " from cache: " + ec.message());
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return MakeError(ErrorKind::kInternal, "placing blob " + d.Short() + ": " + std::strerror(e));
  }
  return fs::FsyncDir(dir_ + "/blobs/sha256");
}

Status LayoutWriter::SetTag(const oci::Descriptor& manifest, const std::string& tag) const {
  oci::Index index;
  std::string index_path = dir_ + "/index.json";
  if (fs::Exists(index_path)) {
    auto raw = fs::ReadSmallFile(index_path);
    if (!raw.ok()) return raw.error();
    auto parsed = oci::ParseIndex(*raw, index_path);
    if (!parsed.ok()) return parsed.error();
    index = *parsed;
  }
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
  index.manifests = kept;
  auto bytes = oci::SerializeIndex(index);
  if (!bytes.ok()) return bytes.error();
  return fs::WriteFileAtomic(index_path, *bytes);
}

}  // namespace imgtool::layout
