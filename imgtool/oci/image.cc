#include "oci/image.h"

#include "oci/image_config.h"
#include "oci/list_limit.h"
#include "oci/media_types.h"
#include "oci/quote.h"
#include "oci/warnings.h"

namespace imgtool::oci {

namespace {

Error Unsupported(const std::string& where, const std::string& media_type) {
  return MakeError(ErrorKind::kInvalidInput, where + ": unsupported manifest media type \"" + media_type +
                                                 "\" (want an OCI or Docker schema 2 image manifest or index)");
}

// Nothing read past a descriptor's size, and never more than a manifest may be.
Status CheckManifestSize(const Descriptor& d, const std::string& where) {
  if (d.size < 0 || static_cast<uint64_t>(d.size) > kMaxManifestBytes) {
    return MakeError(ErrorKind::kInvalidInput, where + ": manifest of " + std::to_string(d.size) +
                                                   " bytes; more than the " + std::to_string(kMaxManifestBytes) +
                                                   " a manifest may be");
  }
  return Status::Ok();
}

Status CheckBytes(const std::string& raw, const Descriptor& d, const std::string& where) {
  if (static_cast<int64_t>(raw.size()) != d.size) {
    return MakeError(ErrorKind::kIntegrity,
                     where + ": " + std::to_string(raw.size()) + " bytes, descriptor says " + std::to_string(d.size));
  }
  Digest actual = Digest::Of(raw);
  if (actual != d.digest) return MakeError(ErrorKind::kIntegrity, where + ": content hashes to " + actual.str());
  return Status::Ok();
}

}  // namespace

Status CheckIndexDepth(const Digest& index, int level) {
  if (level <= kMaxIndexDepth) return Status::Ok();
  return MakeError(ErrorKind::kInvalidInput, "manifest " + index.Short() + ": nested too deep (more than " +
                                                 std::to_string(kMaxIndexDepth) + " index levels)");
}

Result<std::string> BlobStore::ReadManifest(const Descriptor& d) const { return ReadBlob(*this, d, kMaxManifestBytes); }

Result<std::string> ReadBlob(const BlobStore& store, const Descriptor& d, uint64_t max_bytes) {
  const std::string what = "blob " + d.digest.str();
  if (d.size < 0 || static_cast<uint64_t>(d.size) > max_bytes) {
    return MakeError(ErrorKind::kInvalidInput, store.name() + ": " + what + ": " + std::to_string(d.size) +
                                                   " bytes is more than a " + d.media_type + " may be");
  }
  auto raw = store.OpenBlob(d);
  if (!raw.ok()) return raw.error();
  CheckedReader checked(std::move(*raw), d.digest, d.size, store.name() + ": " + what);
  return ReadAll(checked, max_bytes, what);
}

Blob::Blob(std::shared_ptr<const BlobStore> store, Descriptor desc, Digest diff_id)
    : store_(std::move(store)), desc_(std::move(desc)), diff_id_(std::move(diff_id)) {}

Result<std::unique_ptr<Reader>> Blob::Open() const {
  auto raw = store_->OpenBlob(desc_);
  if (!raw.ok()) return raw.error();
  return std::unique_ptr<Reader>(std::make_unique<CheckedReader>(std::move(*raw), desc_.digest, desc_.size,
                                                                 store_->name() + ": blob " + desc_.digest.str()));
}

namespace {

// A manifest's own "mediaType"; "" when it has none (umoci writes none).
std::string OwnMediaType(const Json& j) {
  if (j.is_object() && j.contains("mediaType") && j["mediaType"].is_string()) return j["mediaType"].get<std::string>();
  return "";
}

std::string Sniffed(const Json& j) {
  std::string own = OwnMediaType(j);
  if (!own.empty()) return own;
  return std::string(j.is_object() && j.contains("manifests") ? kMediaTypeIndex : kMediaTypeManifest);
}

enum class Kind { kOther, kManifest, kIndex };

Kind KindOf(std::string_view media_type) {
  if (IsManifestMediaType(media_type)) return Kind::kManifest;
  if (IsIndexMediaType(media_type)) return Kind::kIndex;
  return Kind::kOther;
}

}  // namespace

std::string SniffManifestMediaType(const std::string& bytes) { return Sniffed(ParseJsonOrDiscarded(bytes)); }

Result<std::string> ManifestMediaType(const Descriptor& named, const std::string& bytes, const std::string& where) {
  Json j = ParseJsonOrDiscarded(bytes);
  std::string type = named.media_type.empty() ? Sniffed(j) : named.media_type;
  if (KindOf(type) == Kind::kOther) return Unsupported(where, type);
  std::string own = OwnMediaType(j);
  if (own.empty() || own == type) return type;
  if (KindOf(own) != KindOf(type)) {
    return MakeError(ErrorKind::kInvalidInput,
                     where + ": its mediaType is " + Quoted(own) + ", but it was named as " + type);
  }
  Warn(where + ": named as " + type + ", but its own mediaType is " + own + "; read as " + own);
  return own;
}

// Builds the views; a friend of Image and ImageIndex, so they stay read-only to everyone else.
struct NodeBuilder {
  static Result<Node> ImageNode(const std::shared_ptr<const BlobStore>& store, const Descriptor& d, std::string raw,
                                const std::string& where) {
    auto img = std::make_shared<Image>();
    img->store_ = store;
    img->desc_ = d;
    img->raw_manifest_ = std::move(raw);
    auto manifest = ParseManifest(img->raw_manifest_, where);
    if (!manifest.ok()) return manifest.error();
    img->manifest_ = std::move(*manifest);
    const Manifest& m = img->manifest_;
    img->config_blob_ = std::make_shared<Blob>(store, m.config);
    bool image_config = IsConfigMediaType(m.config.media_type);  // until its bytes say otherwise
    std::vector<Digest> diff_ids;
    img->raw_config_ = ReadBlob(*store, m.config, kMaxConfigBytes);
    if (!img->raw_config_.ok()) {
      img->config_ = img->raw_config_.error().Context(where + ": config");
    } else {
      auto reading = ReadConfig(m.config.media_type, *img->raw_config_, where + ": config " + m.config.digest.Short());
      if (reading.ok()) image_config = reading->image_config;
      img->config_ = ConfigOf(std::move(reading), m, where, diff_ids);
    }
    img->artifact_type_ = !m.artifact_type.empty() ? m.artifact_type : image_config ? "" : m.config.media_type;
    // Every layer, whatever the config says: copy and verify walk them all.
    for (size_t i = 0; i < m.layers.size(); ++i) {
      // diff_ids belong to tar layers; a signature payload's is its own digest, not checked.
      bool tar = i < diff_ids.size() && IsLayerMediaType(m.layers[i].media_type);
      img->layers_.push_back(std::make_shared<Layer>(store, m.layers[i], tar ? diff_ids[i] : Digest()));
    }
    return Node{d, img, nullptr};
  }

  // The config an image is judged by, or why it has none; `diff_ids` set only when its
  // diff_ids match the layers.
  static Result<Json> ConfigOf(Result<ConfigReading> reading, const Manifest& m, const std::string& where,
                               std::vector<Digest>& diff_ids) {
    if (!reading.ok()) return reading.error();
    if (reading->image_config && reading->diff_ids.size() != m.layers.size()) {
      return MakeError(ErrorKind::kIntegrity, where + ": manifest has " + std::to_string(m.layers.size()) +
                                                  " layers, config " + std::to_string(reading->diff_ids.size()) +
                                                  " diff_ids");
    }
    diff_ids = std::move(reading->diff_ids);
    return std::move(reading->config);
  }

  static Result<Node> IndexNode(const std::shared_ptr<const BlobStore>& store, const Descriptor& d, std::string raw,
                                const std::string& where, int level) {
    auto depth = CheckIndexDepth(d.digest, level);
    if (!depth.ok()) return depth.error().Context(store->name());
    auto idx = std::make_shared<ImageIndex>();
    idx->level_ = level;
    idx->store_ = store;
    idx->desc_ = d;
    idx->raw_manifest_ = std::move(raw);
    auto parsed = ParseIndex(idx->raw_manifest_, where);
    if (!parsed.ok()) return parsed.error();
    // Every walk of an index reads each distinct child (copy, sign --recursive, policy).
    IMGTOOL_TRY(CheckListLength(DistinctDigests(parsed->manifests), where, "distinct manifests"));
    idx->index_ = std::move(*parsed);
    return Node{d, nullptr, idx};
  }
};

namespace {

// OpenNode for an index's child: `level` is the level an index there would have.
Result<Node> OpenNodeAt(const std::shared_ptr<const BlobStore>& store, const Descriptor& d,
                        std::optional<std::string> raw, int level) {
  const std::string where = store->name() + ": manifest " + d.digest.Short();
  IMGTOOL_TRY(CheckManifestSize(d, where));
  if (!raw) {
    auto read = store->ReadManifest(d);
    if (!read.ok()) return read.error();
    raw = std::move(*read);
  }
  IMGTOOL_TRY(CheckBytes(*raw, d, where));
  auto media_type = ManifestMediaType(d, *raw, where);
  if (!media_type.ok()) return media_type.error();
  Descriptor desc = d;
  desc.media_type = std::move(*media_type);
  if (IsIndexMediaType(desc.media_type)) return NodeBuilder::IndexNode(store, desc, std::move(*raw), where, level);
  return NodeBuilder::ImageNode(store, desc, std::move(*raw), where);
}

}  // namespace

Result<Node> OpenNode(const std::shared_ptr<const BlobStore>& store, const Descriptor& d,
                      std::optional<std::string> raw) {
  return OpenNodeAt(store, d, std::move(raw), 1);
}

Result<Node> ImageIndex::Child(const Descriptor& d) const {
  auto node = OpenNodeAt(store_, d, std::nullopt, level_ + 1);
  if (!node.ok()) return node.error().Context("index " + desc_.digest.Short());
  return node;
}

Result<Descriptor> ImageIndex::ChildFor(const Platform& p) const {
  std::string have;
  for (const auto& c : index_.manifests) {
    if (!c.platform) continue;
    if (PlatformMatches(p, *c.platform)) return c;
    have += (have.empty() ? "" : ", ") + PlatformString(*c.platform);
  }
  return MakeError(ErrorKind::kNotFound, "index " + desc_.digest.Short() + ": no image for " + PlatformString(p) +
                                             " (it has " + (have.empty() ? "no platforms" : have) + ")");
}

}  // namespace imgtool::oci
