#include "sign/store.h"

#include "sign/signature_image.h"
#include "transport/write.h"

namespace imgtool::sign {

Result<SignatureStore> SignatureStore::Open(const ref::Reference& ref, const transport::SinkOptions& opts) {
  auto opened = transport::Open(ref, opts.registry);
  if (!opened.ok()) return opened.error();
  SignatureStore s;
  s.ref_ = ref;
  s.opts_ = opts;
  s.repo_ = opened->repository;
  s.node_ = opened->node;
  s.image_ = opened->node.descriptor.digest;
  return s;
}

namespace {

Result<oci::Node> OpenEntry(const oci::Node& node, const oci::Repository& repo, const oci::Digest& digest) {
  if (node.index) {
    for (const auto& e : node.index->children()) {
      if (e.digest == digest) return node.index->Child(e);
    }
  }
  return repo.Open(digest.str());
}

}  // namespace

Result<SignatureStore> SignatureStore::For(const oci::Digest& digest) const {
  auto node = OpenEntry(node_, *repo_, digest);
  if (!node.ok()) return node.error();
  SignatureStore s = *this;
  s.node_ = *node;
  s.image_ = digest;
  return s;
}

Result<std::vector<SignatureLayer>> SignatureStore::Read(std::string_view suffix) const {
  std::string tag = ArtifactTag(image_, suffix);
  auto desc = repo_->Resolve(tag);
  if (!desc.ok()) {
    if (desc.error().kind == ErrorKind::kNotFound) return std::vector<SignatureLayer>();
    return desc.error().Context("reading " + tag);
  }
  auto raw = repo_->store()->ReadManifest(*desc);
  if (!raw.ok()) return raw.error().Context("reading " + tag);
  auto manifest = oci::ParseManifest(*raw, repo_->name() + ": " + tag);
  if (!manifest.ok()) return manifest.error();
  return SignatureLayers(*repo_->store(), *manifest);
}

// A Sigstore bundle is at most a few KiB; the bound is the bundle parser's.
constexpr uint64_t kMaxReferrerBlob = 8u << 20;

Result<std::vector<SignatureLayer>> SignatureStore::ReadReferrers(std::string_view artifact_type) const {
  const std::string type(artifact_type);
  auto found = repo_->Referrers(image_, type);
  if (!found.ok()) return found.error();
  // `found` is of this type only, each digest once, and capped before this walk.
  std::vector<SignatureLayer> out;
  for (const oci::Descriptor& d : *found) {
    const std::string what = repo_->name() + ": referrer " + d.digest.str();
    auto raw = repo_->store()->ReadManifest(d);
    if (!raw.ok()) return raw.error().Context(what);
    auto manifest = oci::ParseManifest(*raw, what);
    if (!manifest.ok()) return manifest.error();
    if (manifest->layers.size() != 1 || manifest->layers[0].media_type != type) continue;
    if (!manifest->subject || manifest->subject->digest != image_) continue;
    auto bytes = oci::ReadBlob(*repo_->store(), manifest->layers[0], kMaxReferrerBlob);
    if (!bytes.ok()) return bytes.error().Context(what);
    out.push_back({manifest->layers[0], *bytes});
  }
  return out;
}

Result<bool> SignatureStore::Append(std::string_view suffix, const SignatureLayer& layer,
                                    const std::function<bool(const SignatureLayer&)>& already_there) const {
  auto existing = Read(suffix);
  if (!existing.ok()) return existing.error();
  for (const auto& l : *existing) {
    if (already_there(l)) return false;
  }
  std::vector<SignatureLayer> layers = *existing;
  layers.push_back(layer);
  std::string tag = ArtifactTag(image_, suffix);
  auto image = SignatureImage(layers);
  if (!image.ok()) return image.error().Context("writing " + tag);
  auto sink = transport::OpenSink(ref_, opts_);
  if (!sink.ok()) return sink.error();
  transport::WriteReport report;
  Status st = transport::Write(*image, **sink, tag, {}, report);
  if (st.ok()) st = (*sink)->Commit();
  if (!st.ok()) return st.error().Context("writing " + tag);
  return true;
}

}  // namespace imgtool::sign
