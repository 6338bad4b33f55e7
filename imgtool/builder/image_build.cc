#include "builder/image_build.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "builder/base_image.h"
#include "builder/base_spec.h"
#include "builder/dpkg_status.h"
#include "builder/elf_toolchain.h"
#include "builder/fetch.h"
#include "builder/metadata_layer.h"
#include "builder/package_layer.h"
#include "fs/atomic_file.h"
#include "layout/layout_sink.h"
#include "oci/human_bytes.h"
#include "oci/image_config.h"
#include "oci/media_types.h"

namespace imgtool::build {

namespace {

using Clock = std::chrono::steady_clock;

// A file of the base image (/etc/passwd, /etc/group, dpkg's status) where a runtime finds
// it (rootfs/image_fs.h: through symlinked folders, after whiteouts, whatever the entry's
// spelling); empty when the base has none (or there is no base).
Result<std::string> FileFromImage(const std::optional<rootfs::ImageFs>& base, const std::string& path,
                                  uint64_t max_bytes = 1 << 20) {
  if (!base) return std::string();
  auto content = base->ReadFile(path, max_bytes);
  if (!content.ok() && content.error().kind == ErrorKind::kNotFound) return std::string();
  if (!content.ok()) return content.error().Context("base image /" + path);
  return content;
}

void SetEnv(oci::Json& cfg, const std::map<std::string, std::string>& env) {
  // Base order first, then the spec's variables in sorted order; the spec wins a clash.
  std::vector<std::string> out;
  std::map<std::string, std::string> rest = env;
  for (const auto& kv : oci::ConfigStringList(cfg, "Env")) {
    std::string key = kv.substr(0, kv.find('='));
    auto it = rest.find(key);
    if (it == rest.end()) {
      out.push_back(kv);
    } else {
      out.push_back(key + "=" + it->second);
      rest.erase(it);
    }
  }
  for (const auto& [k, v] : rest) out.push_back(k + "=" + v);
  if (!out.empty()) cfg["config"]["Env"] = out;
}

}  // namespace

const char* CompressionName(archive::Compression c) {
  switch (c) {
    case archive::Compression::kGzip:
      return "gzip";
    case archive::Compression::kZstd:
      return "zstd";
    case archive::Compression::kNone:
      return "none";
  }
  return "gzip";
}

ImageBuild::ImageBuild(Spec spec, const BuildOptions& options)
    : spec_(std::move(spec)), opt_(options), known_(archive::KnownDiffIds::In(options.cache_dir)) {
  compression_ = opt_.compression ? *opt_.compression : spec_.compression.value_or(archive::Compression::kGzip);
}

Result<std::unique_ptr<ImageBuild>> ImageBuild::Prepare(Spec spec, const BuildOptions& options) {
  std::unique_ptr<ImageBuild> b(new ImageBuild(std::move(spec), options));
  IMGTOOL_TRY(b->OpenBaseImage());
  FetchOptions fetch;
  fetch.cache_dir = options.download_dir;
  fetch.progress = options.progress;
  IMGTOOL_TRY(FetchPackageUrls(b->spec_, fetch));
  if (!options.cache_dir.empty()) {
    auto c = LayerCache::Open(options.cache_dir);
    if (c.ok()) b->cache_ = *c;
  }
  IMGTOOL_TRY(b->PlanLayers());
  return b;
}

void ImageBuild::Say(const std::string& line) const {
  if (opt_.progress) opt_.progress(line);
}

Status ImageBuild::OpenBaseImage() {
  if (spec_.base.scratch) return Status::Ok();
  auto b = OpenBase(spec_, BaseOptions{opt_.download_dir, opt_.registry, opt_.progress});
  if (!b.ok()) return b.error().Context("base image");
  base_ = *b;
  auto view = rootfs::ImageFs::Build(*base_);
  if (!view.ok()) return view.error().Context("base image");
  base_fs_.emplace(std::move(*view));
  return Status::Ok();
}

// The layer cache key: the same planned inputs, tool, compressor and epoch give the same
// blob. The compressor's name, version and mode are in it, so a cached layer written by
// another encoder (or libzstd) is never reused as if this one had written it.
oci::Digest ImageBuild::LayerKey(const PlannedLayer& plan) const {
  archive::CompressorInfo c = archive::DescribeCompressor(compression_);
  return oci::Digest::Of(std::string("imgtool ") + IMGTOOL_VERSION + "\n" + CompressionName(compression_) + "\n" +
                         c.name + " " + c.version + " " + c.mode + "\nepoch " + std::to_string(opt_.epoch) + "\n" +
                         plan.fingerprint);
}

// A layer of debs and wheels is keyed by its pins; on a hit whose blob is still cached,
// nothing is unpacked (package_layer.h). Otherwise it is planned as usual.
Result<PlannedLayer> ImageBuild::Plan(const LayerSpec& layer, const PlanOptions& options) const {
  if (!cache_.enabled() || !IsPackageOnlyLayer(layer)) return PlanLayer(layer, options);
  PlannedLayer plan;
  plan.name = layer.name;
  plan.fingerprint = PackageLayerFingerprint(layer);
  oci::Digest key = LayerKey(plan);
  auto hit = cache_.Lookup(key);
  auto side = hit ? cache_.LookupSidecar(key, "packages.json") : std::nullopt;
  auto cached = side ? ParsePackageRecords(*side, layer) : std::nullopt;
  Status blob = cached ? cache_.CheckBlob(*hit) : Status::Ok();
  if (!blob.ok() && blob.error().kind != ErrorKind::kNotFound) {
    Say("layer " + layer.name + ": not taken from the cache: " + blob.error().message + "; building it");
  }
  if (cached && blob.ok()) {
    IMGTOOL_TRY(CheckPackagePins(layer));
    plan.prebuilt = true;
    plan.packages = std::move(cached->records);
    plan.notes = std::move(cached->notes);
    return plan;
  }
  auto full = PlanLayer(layer, options);
  if (!full.ok()) return full.error();
  full->fingerprint = plan.fingerprint;
  full->keep_package_records = true;
  return full;
}

Status ImageBuild::PlanLayers() {
  PlanOptions options;
  if (!opt_.cache_dir.empty()) options.staging_parent = opt_.cache_dir + "/staging";
  for (const auto& l : spec_.layers) {
    auto plan = Plan(l, options);
    if (!plan.ok()) return plan.error().Context(opt_.spec_path);
    for (const auto& n : plan->notes) Say(n);
    packages_.insert(packages_.end(), plan->packages.begin(), plan->packages.end());
    plans_.push_back(std::move(*plan));
  }
  return PlanMetadataLayer();
}

// /etc/passwd, /etc/group, stack.json and dpkg's status: made here, so that a clash with
// the base is found before any output exists.
Status ImageBuild::PlanMetadataLayer() {
  auto passwd = FileFromImage(base_fs_, "etc/passwd");
  if (!passwd.ok()) return passwd.error();
  auto group = FileFromImage(base_fs_, "etc/group");
  if (!group.ok()) return group.error();
  std::string dpkg_status;
  if (std::any_of(packages_.begin(), packages_.end(), [](const auto& x) { return x.kind == PackageKind::kDeb; })) {
    auto base_status = FileFromImage(base_fs_, "var/lib/dpkg/status", 64 << 20);
    if (!base_status.ok()) return base_status.error();
    auto status = DpkgStatus(*base_status, packages_);
    if (!status.ok()) return status.error().Context(opt_.spec_path);
    dpkg_status = *status;
  }
  auto meta = MetadataEntries(spec_, *passwd, *group, packages_, dpkg_status);
  if (!meta.ok()) return meta.error().Context(opt_.spec_path);
  PlannedLayer plan;
  plan.name = "imgtool-metadata";
  plan.entries = *meta;
  plan.inputs.resize(plan.entries.size());
  plan.fingerprint = "metadata\n";
  for (const auto& e : plan.entries) {
    plan.fingerprint += e.path + "\t" + std::to_string(e.mode) + "\t" + std::to_string(e.uid) + ":" +
                        std::to_string(e.gid) + "\t" + oci::Digest::Of(e.content).str() + "\n";
  }
  plans_.push_back(std::move(plan));
  return Status::Ok();
}

Result<Lock> ImageBuild::LockNow() const {
  oci::Digest base_manifest = base_ ? base_->digest() : oci::Digest();
  return MakeLock(spec_, base_manifest, plans_, [&](size_t l) -> std::optional<std::vector<oci::Digest>> {
    auto hit = cache_.Lookup(LayerKey(plans_[l]));
    if (!hit) return std::nullopt;
    return hit->file_digests;
  });
}

void ImageBuild::ExpectLocked(const Lock& lock) {
  std::map<std::pair<std::string, std::string>, oci::Digest> locked;
  for (const auto& in : lock.inputs) {
    if (in.kind == "file") locked[{in.layer, in.name}] = in.sha256;
  }
  for (auto& plan : plans_) {
    for (size_t i = 0; i < plan.entries.size() && i < plan.inputs.size(); ++i) {
      archive::Entry& e = plan.entries[i];
      if (plan.inputs[i].empty() || e.type != archive::EntryType::kFile) continue;
      auto it = locked.find({plan.name, "/" + e.path});
      if (it != locked.end()) e.expect_sha256 = it->second;
    }
  }
}

// Writes (or finds in the cache) one planned layer into the layout; its inputs go to
// `result` for the build record.
Result<LayerOutcome> ImageBuild::AddLayer(const layout::LayoutWriter& out, const PlannedLayer& plan, size_t n,
                                          size_t total, ImageResult& result) {
  auto start = Clock::now();
  std::string label = "layer " + std::to_string(n) + "/" + std::to_string(total) + " " + plan.name;
  if (!spec_.platforms.empty() || opt_.platform) label = oci::PlatformString(spec_.platform) + " " + label;
  oci::Digest key = LayerKey(plan);
  std::optional<archive::WrittenLayer> written = cache_.Lookup(key);
  bool cached = written && out.HasBlob(written->digest, static_cast<int64_t>(written->size));
  Status placed = Status::Ok();
  if (written && !cached) {
    // Opened without following, linked only when ours, hashed unless known unchanged.
    placed = cache_.PlaceBlob(*written, out);
    cached = placed.ok();
    if (!placed.ok() && placed.error().kind != ErrorKind::kNotFound) {
      Say(label + ": not taken from the cache: " + placed.error().message + "; building it");
    }
  }
  if (!cached && plan.prebuilt) {
    return MakeError(ErrorKind::kInternal, label + ": its cached blob changed during the build (" +
                                               (placed.ok() ? std::string("gone") : placed.error().message) +
                                               "); run again");
  }
  if (!cached) {
    Say(label + ": " + std::to_string(plan.entries.size()) + " entries, " + HumanBytes(plan.content_bytes));
    fs::AtomicFile blob;
    IMGTOOL_TRY(out.OpenBlobFile(blob));
    archive::LayerOptions lo;
    lo.compression = compression_;
    lo.mtime = opt_.epoch;
    auto last = Clock::now();
    lo.progress = [&](uint64_t done, uint64_t all) {
      if (Clock::now() - last < std::chrono::seconds(1)) return;
      last = Clock::now();
      Say(label + ": " + HumanBytes(done) + " of " + HumanBytes(all));
    };
    auto w = archive::WriteLayer(plan.entries, lo, blob);
    if (!w.ok()) return w.error().Context("building " + label);
    IMGTOOL_TRY(out.CommitBlob(blob, w->digest));
    written = *w;
    (void)cache_.Store(key, *written, out);  // the cache is best effort
    if (w->diff_id != w->digest) known_.Record(w->digest, {w->diff_id, w->uncompressed_size});
  }
  if (plan.keep_package_records) {
    (void)cache_.StoreSidecar(key, "packages.json", PackageRecordsJson(plan.packages, plan.notes));
  }
  for (size_t i = 0; i < plan.entries.size() && i < written->file_digests.size(); ++i) {
    if (!plan.inputs[i].empty()) {
      result.inputs.push_back(
          {plan.name, plan.inputs[i], written->file_digests[i], plan.entries[i].size, ElfToolchainOf(plan.entries[i])});
    }
  }
  for (const auto& pkg : plan.packages) {
    result.inputs.push_back(
        {plan.name, std::string(PackageKindName(pkg.kind)) + ":" + pkg.source, pkg.sha256, pkg.size});
  }
  LayerOutcome o;
  o.name = plan.name;
  o.descriptor =
      oci::Descriptor{written->media_type, written->digest, static_cast<int64_t>(written->size), {}, std::nullopt, {}};
  o.diff_id = written->diff_id;
  o.file_digests = written->file_digests;
  o.cached = cached;
  o.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  Say(label + ": " + written->digest.Short() + " " + HumanBytes(written->size) + (cached ? " (cached)" : ""));
  return o;
}

// The base's layers, streamed (or linked) and checked against its descriptors on the way.
Status ImageBuild::CopyBaseLayers(const std::string& out_dir, oci::Manifest& manifest) const {
  if (!base_) return Status::Ok();
  manifest.annotations["org.opencontainers.image.base.digest"] = base_->digest().str();
  if (std::string name = BaseName(spec_.base); !name.empty()) {
    manifest.annotations["org.opencontainers.image.base.name"] = name;
  }
  auto sink = layout::LayoutSink::Open(out_dir, "build output");
  if (!sink.ok()) return sink.error();
  for (const auto& l : base_->layers()) {
    auto put = (*sink)->PutBlob(*l, nullptr);
    if (!put.ok()) return put.error().Context("base image");
    manifest.layers.push_back(oci::Descriptor{l->media_type(), l->digest(), l->size(), {}, std::nullopt, {}});
  }
  return Status::Ok();
}

// The base's config (or a new one) with our layers, the user, env, entrypoint and labels.
oci::Json ImageBuild::Config(const std::vector<LayerOutcome>& layers) const {
  // A base's config was read and judged when it was opened (OpenBase, via SelectPlatform).
  oci::Json cfg = base_ ? *base_->config() : oci::NewImageConfig(spec_.platform.os, spec_.platform.architecture);
  if (!base_ && !spec_.platform.variant.empty()) cfg["variant"] = spec_.platform.variant;
  std::string created = oci::Rfc3339(opt_.epoch);
  for (const auto& o : layers) {
    oci::AppendLayerToConfig(cfg, o.diff_id, {created, "imgtool build: layer " + o.name, false});
  }
  cfg["created"] = created;
  cfg["config"]["User"] = std::to_string(spec_.user.uid) + ":" + std::to_string(spec_.user.gid);
  SetEnv(cfg, spec_.env);
  if (!spec_.workdir.empty()) {
    cfg["config"]["WorkingDir"] = spec_.workdir;
  } else if (!base_) {
    cfg["config"]["WorkingDir"] = spec_.user.home;
  }
  if (spec_.entrypoint) {
    cfg["config"]["Entrypoint"] = *spec_.entrypoint;
    if (!spec_.cmd) cfg["config"].erase("Cmd");
  }
  if (spec_.cmd) cfg["config"]["Cmd"] = *spec_.cmd;
  for (const auto& [k, v] : spec_.labels) cfg["config"]["Labels"][k] = v;
  for (const auto& [k, v] : spec_.stack) cfg["config"]["Labels"][StackLabel(k)] = v;
  return cfg;
}

Result<ImageResult> ImageBuild::Write(layout::LayoutWriter& out, const std::string& out_dir) {
  ImageResult r;
  r.platform = spec_.platform;
  r.packages = packages_;
  if (base_) r.base_manifest = base_->digest();
  oci::Manifest manifest;
  IMGTOOL_TRY(CopyBaseLayers(out_dir, manifest));
  for (size_t i = 0; i < plans_.size(); ++i) {
    auto o = AddLayer(out, plans_[i], i + 1, plans_.size(), r);
    if (!o.ok()) return o.error();
    manifest.layers.push_back(o->descriptor);
    r.layers.push_back(*o);
  }
  auto cfg_bytes = oci::CanonicalJson(Config(r.layers));
  if (!cfg_bytes.ok()) return cfg_bytes.error();
  auto cfg_desc = out.WriteBlob(*cfg_bytes, oci::kMediaTypeConfig);
  if (!cfg_desc.ok()) return cfg_desc.error();
  manifest.config = *cfg_desc;
  auto man_bytes = oci::SerializeManifest(manifest);
  if (!man_bytes.ok()) return man_bytes.error();
  auto man_desc = out.WriteBlob(*man_bytes, oci::kMediaTypeManifest);
  if (!man_desc.ok()) return man_desc.error();
  r.manifest = *man_desc;
  r.config = *cfg_desc;
  // The lock as the layers read their files: nothing is hashed again.
  auto lock = MakeLock(spec_, r.base_manifest, plans_, [&](size_t l) -> std::optional<std::vector<oci::Digest>> {
    if (l >= r.layers.size()) return std::nullopt;
    return r.layers[l].file_digests;
  });
  if (!lock.ok()) return lock.error();
  r.lock = std::move(*lock);
  return r;
}

}  // namespace imgtool::build
