#include "builder/layer_cache.h"

#include <sys/stat.h>

#include <cstdlib>

#include "fs/atomic_file.h"
#include "fs/file_identity.h"
#include "fs/own_file.h"
#include "fs/safe_open.h"
#include "oci/canonical_json.h"

namespace imgtool::build {

namespace {

constexpr uint64_t kMaxEntryBytes = 64 << 20;  // file_digests of a layer of many files
constexpr uint64_t kMaxRecordBytes = 512;

std::string EntryName(const oci::Digest& key) { return "layers/" + key.hex() + ".json"; }
std::string BlobName(const oci::Digest& blob) { return "blobs/sha256/" + blob.hex(); }
std::string HashedName(const oci::Digest& blob) { return "hashed/" + blob.hex(); }

// "blob sha256:<hex>\n<identity>\n": the blob is named inside, so a record renamed
// under another blob's name (with that blob's file renamed too) is refused.
std::string HashedRecord(const oci::Digest& blob, const fs::FileIdentity& id) {
  return "blob " + blob.str() + "\n" + id.str() + "\n";
}

// A sidecar starts with the key it belongs to, for the same reason.
std::string SidecarHeader(const oci::Digest& key) { return "key " + key.str() + "\n"; }

std::optional<archive::WrittenLayer> ParseEntry(const std::string& raw, const oci::Digest& key) {
  auto j = oci::ParseJson(raw, "cache entry");
  if (!j.ok() || !j->is_object()) return std::nullopt;
  try {
    if (j->at("key").get<std::string>() != key.str()) return std::nullopt;
    archive::WrittenLayer l;
    auto digest = oci::Digest::Parse(j->at("digest").get<std::string>());
    auto diff_id = oci::Digest::Parse(j->at("diff_id").get<std::string>());
    if (!digest.ok() || !diff_id.ok()) return std::nullopt;
    l.digest = *digest;
    l.diff_id = *diff_id;
    l.size = j->at("size").get<uint64_t>();
    l.uncompressed_size = j->at("uncompressed_size").get<uint64_t>();
    l.media_type = j->at("media_type").get<std::string>();
    for (const auto& f : j->at("file_digests")) {
      std::string s = f.get<std::string>();
      if (s.empty()) {
        l.file_digests.emplace_back();
        continue;
      }
      auto d = oci::Digest::Parse(s);
      if (!d.ok()) return std::nullopt;
      l.file_digests.push_back(*d);
    }
    return l;
  } catch (const oci::Json::exception&) {
    return std::nullopt;
  }
}

oci::Descriptor DescriptorOf(const archive::WrittenLayer& layer) {
  return oci::Descriptor{layer.media_type, layer.digest, static_cast<int64_t>(layer.size), {}, std::nullopt, {}};
}

}  // namespace

// A cached blob, open: `known` when its identity is the one recorded at its last hash.
struct LayerCache::OpenedBlob {
  fs::UniqueFd fd;
  bool known = false;
};

std::string LayerCache::DefaultDir() {
  if (const char* c = std::getenv("IMGTOOL_CACHE"); c && *c) return c;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/imgtool";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/imgtool";
  return "";
}

Result<LayerCache> LayerCache::Open(const std::string& dir) {
  if (dir.empty()) return Disabled();
  for (const char* sub : {"/layers", "/blobs/sha256", "/hashed"}) IMGTOOL_TRY(fs::MakeDirs(dir + sub));
  LayerCache c;
  c.dir_ = dir;
  return c;
}

std::optional<archive::WrittenLayer> LayerCache::Lookup(const oci::Digest& key) const {
  if (!enabled()) return std::nullopt;
  // A damaged or untrusted entry is a miss, never an error: the cache is an accelerator.
  auto raw = fs::ReadOwnFileBeneath(dir_, EntryName(key), kMaxEntryBytes);
  if (!raw.ok()) return std::nullopt;
  return ParseEntry(*raw, key);
}

Result<LayerCache::OpenedBlob> LayerCache::OpenBlob(const archive::WrittenLayer& layer) const {
  const std::string what = "layer cache: blob " + layer.digest.str();
  if (!enabled()) return MakeError(ErrorKind::kNotFound, what + ": no cache");
  uint64_t size = 0;
  auto fd = fs::OpenRegularBeneath(dir_, BlobName(layer.digest), &size);
  if (!fd.ok()) return fd.error().Context("layer cache");
  if (size != layer.size) {
    return MakeError(ErrorKind::kIntegrity,
                     what + ": " + std::to_string(size) + " bytes, the entry says " + std::to_string(layer.size));
  }
  OpenedBlob b;
  b.fd = std::move(*fd);
  struct stat st {};
  if (::fstat(b.fd.get(), &st) == 0 && fs::OnlyWeCanWrite(st)) {
    auto record = fs::ReadOwnFileBeneath(dir_, HashedName(layer.digest), kMaxRecordBytes);
    b.known = record.ok() && *record == HashedRecord(layer.digest, fs::FileIdentity::Of(st));
  }
  return b;
}

// Records the open blob's identity now: called right after its content was checked (or
// after a link moved its ctime). Only a file nobody else can write is worth recording.
void LayerCache::RecordHashed(const oci::Digest& blob, int fd) const {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !fs::OnlyWeCanWrite(st)) return;
  (void)fs::WriteOwnFile(dir_ + "/" + HashedName(blob), HashedRecord(blob, fs::FileIdentity::Of(st)));
}

Status LayerCache::CheckBlob(const archive::WrittenLayer& layer) const {
  auto b = OpenBlob(layer);
  if (!b.ok()) return b.error();
  if (b->known) return Status::Ok();
  auto reader = std::make_unique<fs::FdReader>(std::move(b->fd));
  int fd = reader->fd();
  oci::CheckedReader checked(std::move(reader), layer.digest, static_cast<int64_t>(layer.size),
                             "layer cache: blob " + layer.digest.str());
  auto n = oci::Drain(checked);
  if (!n.ok()) return n.error();
  RecordHashed(layer.digest, fd);
  return Status::Ok();
}

Status LayerCache::PlaceBlob(const archive::WrittenLayer& layer, const layout::LayoutWriter& out) const {
  auto b = OpenBlob(layer);
  if (!b.ok()) return b.error();
  auto imported = out.ImportBlob(b->fd.get(), DescriptorOf(layer),
                                 b->known ? layout::ContentCheck::kKnownGood : layout::ContentCheck::kHash);
  if (!imported.ok()) return imported.error().Context("layer cache");
  // A link moved the file's ctime; a hash just checked it: either way, record it now.
  if (imported->linked || imported->bytes_hashed > 0) RecordHashed(layer.digest, b->fd.get());
  return Status::Ok();
}

Status LayerCache::Store(const oci::Digest& key, const archive::WrittenLayer& layer,
                         const layout::LayoutWriter& out) const {
  if (!enabled()) return Status::Ok();
  // The output's file, just written (and hashed as it was written): linked by descriptor
  // over whatever the cache held under that name, a symlink or damaged file included.
  auto fd = fs::OpenRegularBeneath(out.dir(), BlobName(layer.digest));
  struct stat st {};
  if (fd.ok() && ::fstat(fd->get(), &st) == 0 && fs::OnlyWeCanWrite(st) &&
      st.st_size == static_cast<off_t>(layer.size)) {
    const std::string cached = dir_ + "/" + BlobName(layer.digest);
    struct stat there {};
    // rename(2) cannot replace a folder: anything under blobs/ that is not a blob is junk.
    if (::lstat(cached.c_str(), &there) == 0 && S_ISDIR(there.st_mode)) (void)fs::RemoveTree(cached);
    if (fs::LinkAtomic(fd->get(), cached).ok()) RecordHashed(layer.digest, fd->get());
  }
  oci::Json files = oci::Json::array();
  for (const auto& d : layer.file_digests) files.push_back(d.empty() ? "" : d.str());
  oci::Json j = {{"key", key.str()},
                 {"digest", layer.digest.str()},
                 {"diff_id", layer.diff_id.str()},
                 {"size", layer.size},
                 {"uncompressed_size", layer.uncompressed_size},
                 {"media_type", layer.media_type},
                 {"file_digests", files}};
  auto bytes = oci::CanonicalJson(j);
  if (!bytes.ok()) return bytes.error();
  return fs::WriteOwnFile(dir_ + "/" + EntryName(key), *bytes);
}

std::optional<std::string> LayerCache::LookupSidecar(const oci::Digest& key, const std::string& name) const {
  if (!enabled()) return std::nullopt;
  auto raw = fs::ReadOwnFileBeneath(dir_, "layers/" + key.hex() + "." + name, kMaxEntryBytes);
  const std::string header = SidecarHeader(key);
  if (!raw.ok() || raw->compare(0, header.size(), header) != 0) return std::nullopt;
  return raw->substr(header.size());
}

Status LayerCache::StoreSidecar(const oci::Digest& key, const std::string& name, const std::string& content) const {
  if (!enabled()) return Status::Ok();
  return fs::WriteOwnFile(dir_ + "/layers/" + key.hex() + "." + name, SidecarHeader(key) + content);
}

}  // namespace imgtool::build
