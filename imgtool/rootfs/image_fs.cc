#include "rootfs/image_fs.h"

#include <map>
#include <utility>

#include "archive/layer.h"
#include "oci/quote.h"
#include "rootfs/applier.h"
#include "rootfs/names.h"
#include "rootfs/tree.h"
#include "rootfs/unpack.h"
#include "rootfs/views.h"

namespace imgtool::rootfs {

using internal::Components;
using internal::Cursor;
using internal::Node;
using internal::NodeType;

namespace {

// kNotFound from this library means one thing: nothing at that path. A layer blob that
// is missing must not read as a missing file (a rule would take it for "no stack.json").
Error LayerError(Error e) {
  if (e.kind == ErrorKind::kNotFound) e.kind = ErrorKind::kIntegrity;
  return e;
}

// The headers of blobs the image names at more than one position (same digest and size),
// kept from their first scan: a manifest naming one blob 1,000 times reads it once, and
// each position is still applied in its turn.
struct Replay {
  bool complete = false;
  std::vector<archive::TarHeader> headers;
};
using Replays = std::map<std::pair<oci::Digest, int64_t>, Replay>;

Replays RepeatedLayers(const std::vector<std::shared_ptr<const oci::Layer>>& layers) {
  std::map<std::pair<oci::Digest, int64_t>, int> uses;
  for (const auto& l : layers) uses[{l->digest(), l->size()}]++;
  Replays out;
  for (const auto& [key, n] : uses) {
    if (n > 1) out[key];
  }
  return out;
}

// Every header of `layer` to `visit`: from the blob, or from its first scan.
Status ScanOnce(const oci::Layer& layer, Replays& replays,
                const std::function<Status(const archive::TarHeader&)>& visit) {
  auto replay = replays.find({layer.digest(), layer.size()});
  if (replay == replays.end()) return archive::ScanLayer(layer, visit);
  if (replay->second.complete) {
    for (const auto& h : replay->second.headers) IMGTOOL_TRY(visit(h));
    return Status::Ok();
  }
  IMGTOOL_TRY(archive::ScanLayer(layer, [&](const archive::TarHeader& h) {
    replay->second.headers.push_back(h);
    return visit(h);
  }));
  replay->second.complete = true;
  return Status::Ok();
}

// One layer onto both views, through the same Applier the unpacker onto a disk uses.
Status ApplyLayer(Applier& applier, const oci::Layer& layer, uint32_t index, Replays& replays) {
  applier.BeginLayer(index);
  Status scanned = ScanOnce(layer, replays, [&](const archive::TarHeader& h) -> Status {
    auto placed = applier.Apply(h);
    return placed.ok() ? Status::Ok() : Status(placed.error());
  });
  if (!scanned.ok()) return LayerError(scanned.error());
  applier.EndLayer();
  return Status::Ok();
}

FileType TypeOf(const Node& n) {
  switch (n.type) {
    case NodeType::kFile:
      return FileType::kFile;
    case NodeType::kDir:
      return FileType::kDir;
    case NodeType::kSymlink:
      return FileType::kSymlink;
    case NodeType::kOther:
    case NodeType::kWhiteout:
      break;
  }
  return FileType::kOther;
}

FileInfo InfoOf(const internal::Views& s, const Node& n, std::string path) {
  FileInfo f;
  f.path = std::move(path);
  f.type = TypeOf(n);
  f.mode = n.mode;
  if (f.type == FileType::kDir) return f;
  f.size = n.size;
  f.link = n.link;
  f.layer = s.layers[n.layer]->digest().str();
  f.layer_index = n.layer;
  f.entry = n.entry;
  return f;
}

// Where one answer came from, for a disagreement ("/etc/passwd: " left off errors).
std::string Describe(const Result<FileInfo>& r) {
  if (!r.ok()) {
    const std::string& m = r.error().message;
    size_t colon = m.find(": ");
    std::string why = m.front() == '/' && colon != std::string::npos ? m.substr(colon + 2) : m;
    return (r.error().kind == ErrorKind::kNotFound ? "nothing (" : "an error (") + why + ")";
  }
  switch (r->type) {
    case FileType::kDir:
      return "a folder at " + internal::QuoteName(r->path);
    case FileType::kFile:
      return internal::QuoteName(r->path) + ", the file of layer " + r->layer + " entry " + std::to_string(r->entry);
    case FileType::kSymlink:
    case FileType::kOther:
      break;
  }
  return internal::QuoteName(r->path) + ", a device or FIFO of layer " + r->layer + " entry " +
         std::to_string(r->entry);
}

bool SameOrigin(const FileInfo& a, const FileInfo& b) {
  if (a.type != b.type) return false;
  return a.type == FileType::kDir || (a.layer == b.layer && a.entry == b.entry);
}

Error Disagree(const std::string& path, const Result<FileInfo>& overlay, const Result<FileInfo>& merged,
               const std::string& how = "") {
  return MakeError(ErrorKind::kIntegrity, path + ": unpackers disagree" + how +
                                              ": overlayfs snapshotters (each layer on its own) see " +
                                              Describe(overlay) +
                                              "; umoci and native snapshotters (each layer "
                                              "onto those below) see " +
                                              Describe(merged));
}

Result<std::string> ReadContent(const internal::Views& s, const FileInfo& f, uint64_t max_bytes) {
  if (f.size > max_bytes) {
    return MakeError(ErrorKind::kInvalidInput, "larger than " + std::to_string(max_bytes) + " bytes");
  }
  auto content = archive::ReadLayerEntry(*s.layers[f.layer_index], f.entry, max_bytes);
  if (!content.ok()) return LayerError(content.error());
  return content;
}

void WalkFrom(const internal::Views& s, const Node& dir, const std::string& path,
              const std::function<void(const FileInfo&)>& visit) {
  for (const auto& [name, node] : *dir.children) {
    std::string p = path.empty() ? name : path + "/" + name;
    visit(InfoOf(s, *node, p));
    if (node->type == NodeType::kDir) WalkFrom(s, *node, p, visit);
  }
}

}  // namespace

ImageFs::ImageFs(std::unique_ptr<internal::Views> state) : state_(std::move(state)) {}
ImageFs::ImageFs(ImageFs&&) noexcept = default;
ImageFs& ImageFs::operator=(ImageFs&&) noexcept = default;
ImageFs::~ImageFs() = default;

Result<ImageFs> ImageFs::Build(const oci::Image& image, const Limits& limits) { return Build(image.layers(), limits); }

Result<ImageFs> ImageFs::Build(std::vector<std::shared_ptr<const oci::Layer>> layers, const Limits& limits) {
  Replays replays = RepeatedLayers(layers);
  Applier applier(layers, limits);
  for (uint32_t i = 0; i < layers.size(); ++i) IMGTOOL_TRY(ApplyLayer(applier, *layers[i], i, replays));
  return std::move(applier).Finish();
}

Result<FileInfo> ImageFs::Stat(Unpacker view, const std::string& path) const {
  Components rest = internal::CleanName(path);
  const std::string asked = "/" + internal::Join(rest);
  // A walk that creates nothing changes nothing: the cursor's pointers are only read.
  Cursor at(state_->root(view), state_->limits.max_path);
  for (;;) {
    if (rest.empty()) return InfoOf(*state_, *at.dir(), at.path());
    std::string base = std::move(rest.back());
    rest.pop_back();
    if (Status st = at.Descend(rest, /*create=*/false); !st.ok()) return st.error().Context(asked);
    rest.clear();
    if (base == "..") {  // the last name of a symlink's target
      at.Up();
      continue;
    }
    const Node* node = at.dir()->Find(base);
    if (node == nullptr) {
      return MakeError(ErrorKind::kNotFound, asked + ": " + internal::QuoteName(at.PathTo(base)) + " does not exist");
    }
    if (node->type != NodeType::kSymlink) return InfoOf(*state_, *node, at.PathTo(base));
    auto target = at.Follow(*node, base);
    if (!target.ok()) return target.error().Context(asked);
    rest = std::move(*target);
  }
}

Result<FileInfo> ImageFs::Resolve(const std::string& path) const {
  auto overlay = Stat(Unpacker::kOverlay, path);
  auto merged = Stat(Unpacker::kMerged, path);
  if (overlay.ok() && merged.ok() && SameOrigin(*overlay, *merged)) return overlay;
  if (!overlay.ok() && !merged.ok() && overlay.error().kind == merged.error().kind) return overlay;
  return Disagree("/" + internal::Join(internal::CleanName(path)), overlay, merged);
}

Result<std::string> ImageFs::ReadFile(const std::string& path, uint64_t max_bytes) const {
  const std::string asked = "/" + internal::Join(internal::CleanName(path));
  auto overlay = Stat(Unpacker::kOverlay, path);
  auto merged = Stat(Unpacker::kMerged, path);
  if (!overlay.ok() || !merged.ok() || overlay->type != FileType::kFile || merged->type != FileType::kFile) {
    auto agreed = Resolve(path);
    if (!agreed.ok()) return agreed.error();
    return MakeError(ErrorKind::kInvalidInput, asked + ": not a regular file (" + Describe(agreed) + ")");
  }
  auto content = ReadContent(*state_, *overlay, max_bytes);
  if (!content.ok()) return content.error().Context(asked);
  if (SameOrigin(*overlay, *merged)) return content;
  // Two entries, maybe with the same bytes (a file written twice): only different bytes matter.
  auto other = ReadContent(*state_, *merged, max_bytes);
  if (!other.ok()) return other.error().Context(asked);
  if (*other != *content) return Disagree(asked, overlay, merged, " on its content");
  return content;
}

void ImageFs::Walk(Unpacker view, const std::function<void(const FileInfo&)>& visit) const {
  WalkFrom(*state_, *state_->root(view), "", visit);
}

const std::vector<SetuidEntry>& ImageFs::setuid_entries() const { return state_->setuid; }

}  // namespace imgtool::rootfs
