#include "rootfs/applier.h"

#include <utility>

#include "rootfs/names.h"
#include "rootfs/tree.h"
#include "rootfs/unpack.h"
#include "rootfs/views.h"

namespace imgtool::rootfs {

using internal::Components;
using internal::Node;

namespace {

bool IsWhiteout(const Components& c) { return !c.empty() && c.back().rfind(".wh.", 0) == 0; }

void RecordSetuid(internal::Views& s, const oci::Layer& layer, const archive::TarHeader& h) {
  if (h.type == archive::HeaderType::kDir || (h.mode & 06000) == 0) return;
  Components c = internal::CleanName(h.name);
  if (c.empty() || IsWhiteout(c)) return;  // a whiteout puts nothing anywhere
  s.setuid.push_back({layer.digest().str(), internal::Join(c), h.mode});
}

}  // namespace

// One layer in progress: its own tree (overlay) and the two appliers.
struct Applier::Layer {
  uint32_t index;
  std::string where;
  std::unique_ptr<Node> own = Node::Dir();
  internal::LayerApplier overlay;
  internal::LayerApplier merged;
  Layer(internal::Views& s, uint32_t i)
      : index(i),
        where("layer " + s.layers[i]->digest().str()),
        overlay(own.get(), /*alone=*/true, i, s.limits.max_path),
        merged(s.merged.get(), /*alone=*/false, i, s.limits.max_path) {}
};

Applier::Applier(std::vector<std::shared_ptr<const oci::Layer>> layers, const Limits& limits)
    : s_(std::make_unique<internal::Views>()) {
  s_->layers = std::move(layers);
  s_->limits = limits;
}
Applier::Applier(Applier&&) noexcept = default;
Applier& Applier::operator=(Applier&&) noexcept = default;
Applier::~Applier() = default;

void Applier::BeginLayer(uint32_t index) { layer_ = std::make_unique<Layer>(*s_, index); }

Result<Placement> Applier::Apply(const archive::TarHeader& h) {
  const std::string& where = layer_->where;
  if (++total_ > s_->limits.max_entries) {
    return MakeError(ErrorKind::kInvalidInput, where + ": more than " + std::to_string(s_->limits.max_entries) +
                                                   " entries in the image's layers");
  }
  const std::string entry = where + ": entry " + internal::QuoteName(h.name);
  if (h.name.size() >= s_->limits.max_path) {
    return MakeError(ErrorKind::kInvalidInput, entry + ": a name of " + std::to_string(h.name.size()) + " bytes");
  }
  RecordSetuid(*s_, *s_->layers[layer_->index], h);
  Placement placed;
  if (Status st = layer_->merged.Apply(h, &placed); !st.ok()) {
    return st.error().Context(entry + ": unpacked onto the layers below");
  }
  if (Status st = layer_->overlay.Apply(h); !st.ok()) return st.error().Context(entry + ": unpacked on its own");
  return placed;
}

void Applier::EndLayer() {
  internal::OverlayStack(*s_->overlay, *layer_->own);
  layer_.reset();
}

bool Applier::InMerged(const std::string& path) const {
  const Node* n = s_->merged.get();
  for (const std::string& name : internal::CleanName(path)) {
    n = n->Find(name);
    if (n == nullptr) return false;
  }
  return true;
}

ImageFs Applier::Finish() && { return ImageFs(std::move(s_)); }

}  // namespace imgtool::rootfs
