#include "layout/layout_reader.h"

#include "fs/safe_open.h"
#include "oci/media_types.h"
#include "oci/quote.h"

namespace imgtool::layout {

namespace {

constexpr uint64_t kMaxIndexBytes = 16 << 20;

std::string RefName(const oci::Descriptor& d) {
  auto it = d.annotations.find(std::string(oci::kAnnotationRefName));
  return it == d.annotations.end() ? "" : it->second;
}

}  // namespace

bool IsReferrerTag(const std::string& tag) {
  static const std::string kPrefix = "sha256-";
  if (tag.rfind(kPrefix, 0) != 0 || tag.size() < kPrefix.size() + 64) return false;
  size_t end = tag.find_first_not_of("0123456789abcdef", kPrefix.size());
  if (end == std::string::npos) return tag.size() == kPrefix.size() + 64;  // the referrers tag schema
  if (end != kPrefix.size() + 64) return false;
  std::string suffix = tag.substr(kPrefix.size() + 64);
  return suffix == ".sbom" || suffix == ".sig" || suffix == ".att";
}

LayoutStore::LayoutStore(std::string dir, std::string name, std::shared_ptr<fs::TempDir> keep)
    : dir_(std::move(dir)), name_(std::move(name)), keep_(std::move(keep)) {}

Result<std::unique_ptr<oci::Reader>> LayoutStore::OpenBlob(const oci::Descriptor& d) const {
  auto fd = fs::OpenRegularBeneath(dir_, "blobs/sha256/" + d.digest.hex());
  if (!fd.ok()) {
    if (fd.error().kind == ErrorKind::kNotFound) {
      return MakeError(ErrorKind::kNotFound,
                       name_ + ": blob " + d.digest.str() + " (" + oci::Printable(d.media_type, false) + "): missing");
    }
    return fd.error().Context(name_ + ": blob " + d.digest.str());
  }
  return std::unique_ptr<oci::Reader>(std::make_unique<fs::FdReader>(std::move(*fd)));
}

Result<oci::Index> ReadIndex(const std::string& dir) {
  auto marker = fs::ReadRegularBeneath(dir, "oci-layout", 4096);
  if (!marker.ok()) {
    if (marker.error().kind == ErrorKind::kNotFound) {
      return MakeError(ErrorKind::kNotFound, dir + ": not an OCI image layout (no oci-layout file)");
    }
    return marker.error();
  }
  auto raw = fs::ReadRegularBeneath(dir, "index.json", kMaxIndexBytes);
  if (!raw.ok()) return raw.error();
  return oci::ParseIndex(*raw, dir + "/index.json");
}

Result<oci::Descriptor> ResolveManifest(const std::string& dir, const std::string& tag_or_digest) {
  auto index = ReadIndex(dir);
  if (!index.ok()) return index.error();
  const auto& ms = index->manifests;
  if (tag_or_digest.empty()) {
    std::vector<const oci::Descriptor*> images;
    for (const auto& d : ms) {
      if (!IsReferrerTag(RefName(d))) images.push_back(&d);
    }
    if (images.size() == 1) return *images[0];
    std::string tags;
    for (const auto* d : images) {
      std::string name = RefName(*d);
      tags += (tags.empty() ? "" : ", ") + (name.empty() ? d->digest.Short() : name);
    }
    return MakeError(ErrorKind::kInvalidInput,
                     dir + ": holds " + std::to_string(images.size()) + " images; name one with :TAG (" + tags + ")");
  }
  for (const auto& d : ms) {
    if (RefName(d) == tag_or_digest || d.digest.str() == tag_or_digest) return d;
  }
  return MakeError(ErrorKind::kNotFound, dir + ": no image tagged " + oci::Quoted(tag_or_digest, '\''));
}

Result<std::string> ReadVerifiedBlob(const std::string& dir, const oci::Descriptor& desc, int64_t max_bytes) {
  LayoutStore store(dir, dir);
  return oci::ReadBlob(store, desc, static_cast<uint64_t>(max_bytes));
}

}  // namespace imgtool::layout
