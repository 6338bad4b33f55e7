#include "tarball/tarball_repository.h"

#include <algorithm>
#include <set>

#include "archive/inflate_reader.h"
#include "fs/atomic_file.h"
#include "oci/quote.h"
#include "ref/docker_name.h"

namespace imgtool::tarball {

namespace {

std::string Q(std::string_view s) { return oci::Quoted(s, '\''); }

// A RepoTag as containers/image compares it: normalised, and only when it names a tag.
std::optional<std::string> NormalTag(const std::string& repo_tag) {
  auto n = ref::ParseDockerName(repo_tag);
  if (!n.ok() || n->tag.empty() || !n->digest.empty()) return std::nullopt;
  return n->host + "/" + n->repository + ":" + n->tag;
}

Result<size_t> ImageNumber(const std::string& text, size_t count) {
  std::string digits = text.substr(1);
  if (digits.empty() || digits.size() > 6 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) {
    return MakeError(ErrorKind::kInvalidInput, Q(text) + " is not an image number (@0, @1, ...)");
  }
  size_t n = std::stoul(digits);
  if (n >= count) {
    return MakeError(ErrorKind::kNotFound, "no image " + text + " (it holds " + std::to_string(count) + ", from @0)");
  }
  return n;
}

}  // namespace

Result<oci::Descriptor> TarballStore::Image(size_t index) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = images_.find(index); it != images_.end()) return it->second;
  auto image = SynthesizeImage(archive_, index);
  if (!image.ok()) return image.error();
  documents_[image->descriptor.digest] = image->manifest;
  documents_[image->config_digest] = image->config;
  for (const auto& l : image->layers) layers_[l.diff_id] = l;
  images_[index] = image->descriptor;
  return image->descriptor;
}

Result<std::unique_ptr<oci::Reader>> TarballStore::OpenBlob(const oci::Descriptor& d) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto doc = documents_.find(d.digest); doc != documents_.end()) {
    return std::unique_ptr<oci::Reader>(std::make_unique<oci::StringReader>(doc->second));
  }
  auto layer = layers_.find(d.digest);
  if (layer == layers_.end()) return MakeError(ErrorKind::kNotFound, name() + ": no blob " + d.digest.str());
  auto member = OpenMember(archive_, layer->second.member);
  if (layer->second.compression == archive::Compression::kNone) return member;
  // Served as the made-up manifest names it: the uncompressed tar.
  auto inflated = archive::InflateReader(std::move(member), name() + ": layer " + d.digest.Short());
  if (!inflated.ok()) return inflated.error();
  return std::move(inflated->reader);
}

Result<size_t> TarballRepository::Select(const std::string& wanted) const {
  const auto& images = archive_->images();
  if (wanted.empty()) {
    if (images.size() == 1) return size_t{0};
    if (images.empty()) return MakeError(ErrorKind::kNotFound, "manifest.json lists no images");
    auto tags = Tags();
    std::string listed;
    for (size_t i = 0; tags.ok() && i < tags->size() && i < 8; ++i) listed += (i ? ", " : "") + Q((*tags)[i]);
    return MakeError(ErrorKind::kInvalidInput, "it holds " + std::to_string(images.size()) + " images: name one, " +
                                                   name() + ":NAME:TAG or " + name() + ":@N" +
                                                   (listed.empty() ? "" : " (tagged " + listed + ")"));
  }
  if (wanted[0] == '@') return ImageNumber(wanted, images.size());
  auto normal = NormalTag(wanted);  // "sha256-<hex>.sig" and the like name no tag: not found
  for (size_t i = 0; normal && i < images.size(); ++i) {
    for (const auto& t : images[i].repo_tags) {
      if (NormalTag(t) == normal) return i;
    }
  }
  return MakeError(ErrorKind::kNotFound, "no image tagged " + Q(wanted));
}

Result<oci::Descriptor> TarballRepository::Resolve(const std::string& wanted) const {
  auto index = Select(wanted);
  if (!index.ok()) return index.error();
  return store_->Image(*index);
}

Result<oci::Node> TarballRepository::Open(const std::string& wanted) const {
  auto d = Resolve(wanted);
  if (!d.ok()) return d.error();
  return oci::OpenNode(store_, *d);
}

Result<std::vector<std::string>> TarballRepository::Tags() const {
  std::set<std::string> tags;
  for (const auto& image : archive_->images()) {
    for (const auto& t : image.repo_tags) {
      if (auto n = NormalTag(t)) tags.insert(*n);
    }
  }
  return std::vector<std::string>(tags.begin(), tags.end());
}

Result<std::shared_ptr<TarballRepository>> OpenTarballRepository(const std::string& path, const std::string& name,
                                                                 const std::string& identity) {
  auto archive = SavedArchive::Open(path, name);
  if (!archive.ok()) return archive.error();
  return std::make_shared<TarballRepository>(*archive, identity);
}

}  // namespace imgtool::tarball
