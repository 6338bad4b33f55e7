#include "builder/base_image.h"

#include <mutex>
#include <vector>

#include "fs/safe_open.h"
#include "layout/layout_repository.h"
#include "layout/layout_sink.h"
#include "layout/layout_writer.h"
#include "oci/human_bytes.h"
#include "transport/open.h"
#include "transport/write.h"

namespace imgtool::build {

namespace {

// The pinned node, then each index's child down to the platform's image (last). Kept
// whole so the cache can hold the indexes as well as the image.
Result<std::vector<oci::Node>> PlatformChain(const oci::Node& top, const oci::Platform& platform) {
  std::vector<oci::Node> chain{top};
  while (chain.back().is_index()) {
    auto child = chain.back().index->ChildFor(platform);
    if (!child.ok()) return child.error();
    auto opened = chain.back().index->Child(*child);
    if (!opened.ok()) return opened.error();
    chain.push_back(std::move(*opened));
  }
  // An image for another platform, or without an image config to build on, is refused.
  auto checked = transport::SelectPlatform(chain.back(), platform);
  if (!checked.ok()) return checked.error();
  if (!chain.back().image || chain.back().image->is_artifact()) {
    return MakeError(ErrorKind::kInvalidInput, chain.back().descriptor.digest.str() + " is not an image");
  }
  return chain;
}

// The platform's image from the cache when the cache holds all of it; kNotFound when any
// manifest, config or layer is missing (the registry is asked then).
Result<std::shared_ptr<const oci::Image>> FromCache(const std::string& dir, const Spec& spec) {
  layout::LayoutRepository cache(dir, "base cache " + dir, "bases");
  auto node = cache.Open(spec.base.digest.str());
  if (!node.ok()) return node.error();
  auto chain = PlatformChain(*node, spec.platform);
  if (!chain.ok()) return chain.error();
  std::shared_ptr<const oci::Image> image = chain->back().image;
  for (const auto& layer : image->layers()) {
    // Not followed: a symlink or FIFO there counts as missing, and is fetched over.
    uint64_t size = 0;
    auto fd = fs::OpenRegularBeneath(dir, "blobs/sha256/" + layer->digest().hex(), &size);
    if (!fd.ok() || size != static_cast<uint64_t>(layer->size())) {
      return MakeError(ErrorKind::kNotFound, "base cache " + dir + ": no layer " + layer->digest().str());
    }
  }
  return image;
}

// Copies the pinned node's chain to the platform's image from the registry into the cache.
Status Fetch(const std::string& dir, const Spec& spec, const BaseOptions& options) {
  const std::string what = "base " + spec.base.reference.str();
  auto opened = transport::Open(spec.base.reference, options.registry);
  if (!opened.ok()) return opened.error();
  auto chain = PlatformChain(opened->node, spec.platform);
  if (!chain.ok()) return chain.error().Context(spec.base.reference.str());
  auto sink = layout::LayoutSink::Open(dir, "base cache " + dir);
  if (!sink.ok()) return sink.error();
  std::mutex mu;
  transport::WriteOptions write;
  write.on_blob = [&](const transport::BlobEvent& e) {
    if (e.kind != transport::BlobEvent::Kind::kDone || !options.progress) return;
    std::lock_guard<std::mutex> lock(mu);
    options.progress(what + ": blob " + e.digest.Short() + " " + HumanBytes(static_cast<uint64_t>(e.size)) + " " +
                     e.action);
  };
  // The image first (blobs, then its manifest), then each index above it, innermost
  // first, so the cache never names what it lacks. The pinned manifest gets an untagged
  // entry in index.json: many bases share the cache, and they are found by digest.
  const auto top_tag = [&](size_t i) { return i == 0 ? std::optional<std::string>("") : std::nullopt; };
  transport::WriteReport report;
  Status st = transport::Write(chain->back(), **sink, top_tag(chain->size() - 1), write, report);
  for (size_t i = chain->size() - 1; st.ok() && i-- > 0;) {
    const oci::Node& index = (*chain)[i];
    st = (*sink)->PutManifest(index.descriptor, index.index->raw_manifest(), top_tag(i));
  }
  if (st.ok()) st = (*sink)->Commit();
  if (!st.ok()) {
    (*sink)->Discard();
    return st.error().Context(what);
  }
  return Status::Ok();
}

}  // namespace

std::string BaseCacheDir(const std::string& download_dir) { return download_dir + "/bases"; }

Result<std::shared_ptr<const oci::Image>> OpenBase(const Spec& spec, const BaseOptions& options) {
  const ref::Reference& r = spec.base.reference;
  if (!spec.base.registry() || options.cache_dir.empty()) {
    auto opened = transport::Open(r, options.registry);
    if (!opened.ok()) return opened.error();
    auto chain = PlatformChain(opened->node, spec.platform);
    if (!chain.ok()) return chain.error().Context(r.str());
    return chain->back().image;
  }
  const std::string dir = BaseCacheDir(options.cache_dir);
  auto cached = FromCache(dir, spec);
  if (cached.ok() && options.progress) options.progress("base " + r.str() + ": from the download cache");
  if (cached.ok() || cached.error().kind != ErrorKind::kNotFound) return cached;
  if (options.progress) options.progress("base " + r.str() + ": fetching into the download cache");
  IMGTOOL_TRY(Fetch(dir, spec, options));
  return FromCache(dir, spec);
}

}  // namespace imgtool::build
