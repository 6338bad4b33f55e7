#include "build/layer_cache.h"

#include <unistd.h>

#include <cstdlib>

#include "fs/atomic_file.h"
#include "oci/canonical_json.h"

namespace imgtool::build {

std::string LayerCache::DefaultDir() {
  if (const char* c = std::getenv("IMGTOOL_CACHE"); c && *c) return c;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/imgtool";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/imgtool";
  return "";
}

Result<LayerCache> LayerCache::Open(const std::string& dir) {
  if (dir.empty()) return Disabled();
  IMGTOOL_TRY(fs::MakeDirs(dir + "/layers"));
  IMGTOOL_TRY(fs::MakeDirs(dir + "/blobs/sha256"));
  LayerCache c;
  c.dir_ = dir;
  return c;
}

std::string LayerCache::BlobPath(const oci::Digest& blob) const { return dir_ + "/blobs/sha256/" + blob.hex(); }

std::optional<archive::WrittenLayer> LayerCache::Lookup(const oci::Digest& key) const {
  if (!enabled()) return std::nullopt;
  auto raw = fs::ReadSmallFile(dir_ + "/layers/" + key.hex() + ".json");
  if (!raw.ok()) return std::nullopt;
  auto j = oci::ParseJson(*raw, "cache entry");
  // A damaged entry is a miss, never an error: the cache is only an accelerator.
  if (!j.ok() || !j->is_object()) return std::nullopt;
  try {
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

Status LayerCache::Store(const oci::Digest& key, const archive::WrittenLayer& layer, const std::string& blob_path) const {
  if (!enabled()) return Status::Ok();
  std::string cached = BlobPath(layer.digest);
  if (!fs::Exists(cached)) {
    std::string tmp = cached + ".link-" + std::to_string(::getpid());
    if (::link(blob_path.c_str(), tmp.c_str()) == 0 && ::rename(tmp.c_str(), cached.c_str()) != 0) ::unlink(tmp.c_str());
  }
  oci::Json files = oci::Json::array();
  for (const auto& d : layer.file_digests) files.push_back(d.empty() ? "" : d.str());
  oci::Json j = {{"digest", layer.digest.str()},
                 {"diff_id", layer.diff_id.str()},
                 {"size", layer.size},
                 {"uncompressed_size", layer.uncompressed_size},
                 {"media_type", layer.media_type},
                 {"file_digests", files}};
  auto bytes = oci::CanonicalJson(j);
  if (!bytes.ok()) return bytes.error();
  return fs::WriteFileAtomic(dir_ + "/layers/" + key.hex() + ".json", *bytes);
}

std::optional<std::string> LayerCache::LookupSidecar(const oci::Digest& key, const std::string& name) const {
  if (!enabled()) return std::nullopt;
  auto raw = fs::ReadSmallFile(dir_ + "/layers/" + key.hex() + "." + name);
  if (!raw.ok()) return std::nullopt;
  return *raw;
}

Status LayerCache::StoreSidecar(const oci::Digest& key, const std::string& name, const std::string& content) const {
  if (!enabled()) return Status::Ok();
  return fs::WriteFileAtomic(dir_ + "/layers/" + key.hex() + "." + name, content);
}

}  // namespace imgtool::build
