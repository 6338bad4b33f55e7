#include "layout/layout_repository.h"

#include <algorithm>

#include "fs/safe_open.h"
#include "layout/oci_archive.h"
#include "oci/media_types.h"

namespace imgtool::layout {

LayoutRepository::LayoutRepository(std::string dir, std::string name, std::string identity,
                                   std::shared_ptr<fs::TempDir> keep)
    : dir_(dir),
      name_(name),
      identity_(std::move(identity)),
      store_(std::make_shared<LayoutStore>(std::move(dir), std::move(name), std::move(keep))) {}

// A manifest that index.json does not list (an index's child) is found by its digest
// among the blobs, as a registry finds any manifest by digest.
Result<oci::Descriptor> LayoutRepository::ByDigest(const oci::Digest& digest) const {
  auto raw = fs::ReadRegularBeneath(dir_, "blobs/sha256/" + digest.hex(), oci::kMaxManifestBytes);
  if (!raw.ok()) {
    if (raw.error().kind == ErrorKind::kNotFound) {
      return MakeError(ErrorKind::kNotFound, name_ + ": no manifest " + digest.str());
    }
    return raw.error().Context(name_);
  }
  return oci::Descriptor{oci::SniffManifestMediaType(*raw), digest, static_cast<int64_t>(raw->size()), {}, {}, {}};
}

Result<oci::Descriptor> LayoutRepository::Resolve(const std::string& tag_or_digest) const {
  auto d = ResolveManifest(dir_, tag_or_digest);
  if (!d.ok() && d.error().kind == ErrorKind::kNotFound && tag_or_digest.rfind("sha256:", 0) == 0) {
    auto digest = oci::Digest::Parse(tag_or_digest);
    if (digest.ok()) return ByDigest(*digest);
  }
  if (!d.ok()) return d.error().Context(name_);
  // index.json's entry carries the tag as an annotation; the manifest's own descriptor does not.
  return oci::Descriptor{d->media_type, d->digest, d->size, {}, d->platform, d->artifact_type};
}

Result<oci::Node> LayoutRepository::Open(const std::string& tag_or_digest) const {
  auto d = Resolve(tag_or_digest);
  if (!d.ok()) return d.error();
  return oci::OpenNode(store_, *d);
}

Result<std::vector<std::string>> LayoutRepository::Tags() const {
  auto index = ReadIndex(dir_);
  if (!index.ok()) return index.error().Context(name_);
  std::vector<std::string> tags;
  for (const auto& d : index->manifests) {
    auto it = d.annotations.find(std::string(oci::kAnnotationRefName));
    if (it != d.annotations.end()) tags.push_back(it->second);
  }
  std::sort(tags.begin(), tags.end());
  return tags;
}

Result<std::shared_ptr<LayoutRepository>> OpenArchiveRepository(const std::string& archive_path,
                                                                const std::string& name, const std::string& identity) {
  auto tmp = fs::TempDir::Create("imgtool-archive-");
  if (!tmp.ok()) return tmp.error();
  auto keep = std::make_shared<fs::TempDir>(std::move(*tmp));
  auto st = ExtractOciArchive(archive_path, keep->path());
  if (!st.ok()) return st.error();
  std::string dir = keep->path();
  return std::make_shared<LayoutRepository>(dir, name, identity, std::move(keep));
}

}  // namespace imgtool::layout
