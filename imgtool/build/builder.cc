#include "build/builder.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include "archive/known_diff_ids.h"
#include "build/base_image.h"
#include "build/base_spec.h"
#include "build/build_record.h"
#include "build/dpkg_status.h"
#include "build/fetch.h"
#include "build/layer_cache.h"
#include "build/lock.h"
#include "build/metadata_layer.h"
#include "build/package_layer.h"
#include "build/plan.h"
#include "build/sbom.h"
#include "build/spec.h"
#include "fs/atomic_file.h"
#include "layout/layout_reader.h"
#include "layout/layout_sink.h"
#include "layout/layout_writer.h"
#include "layout/oci_archive.h"
#include "oci/human_bytes.h"
#include "oci/image_config.h"
#include "oci/media_types.h"
#include "rootfs/image_fs.h"

namespace imgtool::build {

namespace {

using Clock = std::chrono::steady_clock;

const char* CompressionName(archive::Compression c) {
  switch (c) {
    case archive::Compression::kGzip: return "gzip";
    case archive::Compression::kZstd: return "zstd";
    case archive::Compression::kNone: return "none";
  }
  return "gzip";
}

// A file of the base image (/etc/passwd, /etc/group, dpkg's status) where a runtime finds
// it (rootfs/image_fs.h: through symlinked folders, after whiteouts, whatever the entry's
// spelling); empty when the base has none.
Result<std::string> FileFromImage(const rootfs::ImageFs& base, const std::string& path, uint64_t max_bytes = 1 << 20) {
  auto content = base.ReadFile(path, max_bytes);
  if (!content.ok() && content.error().kind == ErrorKind::kNotFound) return std::string();
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

struct Pipeline {
  const BuildOptions& opt;
  Spec spec;
  archive::Compression compression = archive::Compression::kGzip;
  LayerCache cache = LayerCache::Disabled();
  std::vector<RecordInput> record_inputs;
  oci::Digest base_manifest;  // the base's image for the platform; empty for scratch
  // Each layer written here is recorded with its diff_id, so verify need not inflate it.
  archive::KnownDiffIds known;

  void Say(const std::string& line) const {
    if (opt.progress) opt.progress(line);
  }

  // The layer cache key: the same planned inputs, tool, compressor and epoch give the same
  // blob. The compressor's name, version and mode are in it, so a cached layer written by
  // another encoder (or libzstd) is never reused as if this one had written it.
  oci::Digest LayerKey(const PlannedLayer& plan) const {
    archive::CompressorInfo c = archive::DescribeCompressor(compression);
    return oci::Digest::Of(std::string("imgtool ") + IMGTOOL_VERSION + "\n" + CompressionName(compression) + "\n" +
                           c.name + " " + c.version + " " + c.mode + "\nepoch " + std::to_string(opt.epoch) + "\n" +
                           plan.fingerprint);
  }

  // A layer of debs and wheels is keyed by its pins; on a hit whose blob is still cached,
  // nothing is unpacked (package_layer.h). Otherwise it is planned as usual.
  Result<PlannedLayer> Plan(const LayerSpec& layer, const PlanOptions& options) const {
    if (!cache.enabled() || !IsPackageOnlyLayer(layer)) return PlanLayer(layer, options);
    PlannedLayer plan;
    plan.name = layer.name;
    plan.fingerprint = PackageLayerFingerprint(layer);
    oci::Digest key = LayerKey(plan);
    auto hit = cache.Lookup(key);
    auto side = hit ? cache.LookupSidecar(key, "packages.json") : std::nullopt;
    auto cached = side ? ParsePackageRecords(*side, layer) : std::nullopt;
    if (cached && fs::Exists(cache.BlobPath(hit->digest))) {
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

  // --locked: the inputs as they are now must equal the lock, before any output exists.
  // File digests come from the layer cache where it has the layer, else from reading.
  Status CheckLock(const std::vector<PlannedLayer>& plans) const {
    auto locked = ReadLock(opt.lock_path);
    if (!locked.ok()) return locked.error();
    auto now = MakeLock(spec, base_manifest, plans, [&](size_t l) -> std::optional<std::vector<oci::Digest>> {
      auto hit = cache.Lookup(LayerKey(plans[l]));
      if (!hit) return std::nullopt;
      return hit->file_digests;
    });
    if (!now.ok()) return now.error();
    return CompareLock(*locked, *now, opt.lock_path);
  }

  // Writes (or finds in the cache) one planned layer into the layout.
  Result<LayerOutcome> AddLayer(const layout::LayoutWriter& out, const PlannedLayer& plan, size_t n, size_t total) {
    auto start = Clock::now();
    std::string label = "layer " + std::to_string(n) + "/" + std::to_string(total) + " " + plan.name;
    oci::Digest key = LayerKey(plan);
    std::optional<archive::WrittenLayer> written = cache.Lookup(key);
    bool cached = false;
    if (written) {
      int64_t size = static_cast<int64_t>(written->size);
      if (out.HasBlob(written->digest, size)) {
        cached = true;
      } else if (fs::Exists(cache.BlobPath(written->digest))) {
        IMGTOOL_TRY(out.ImportBlob(cache.BlobPath(written->digest), written->digest));
        cached = out.HasBlob(written->digest, size);
      }
    }
    if (!cached && plan.prebuilt) {
      return MakeError(ErrorKind::kInternal, label + ": its cached blob disappeared during the build; run again");
    }
    if (!cached) {
      Say(label + ": " + std::to_string(plan.entries.size()) + " entries, " + HumanBytes(plan.content_bytes));
      fs::AtomicFile blob;
      IMGTOOL_TRY(out.OpenBlobFile(blob));
      archive::LayerOptions lo;
      lo.compression = compression;
      lo.mtime = opt.epoch;
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
      (void)cache.Store(key, *written, out.BlobPath(w->digest));  // the cache is best effort
      if (w->diff_id != w->digest) known.Record(w->digest, {w->diff_id, w->uncompressed_size});
    }
    if (plan.keep_package_records) {
      (void)cache.StoreSidecar(key, "packages.json", PackageRecordsJson(plan.packages, plan.notes));
    }
    for (size_t i = 0; i < plan.entries.size() && i < written->file_digests.size(); ++i) {
      if (!plan.inputs[i].empty()) {
        record_inputs.push_back({plan.name, plan.inputs[i], written->file_digests[i], plan.entries[i].size});
      }
    }
    for (const auto& pkg : plan.packages) {
      record_inputs.push_back({plan.name, std::string(PackageKindName(pkg.kind)) + ":" + pkg.source, pkg.sha256, pkg.size});
    }
    LayerOutcome o;
    o.name = plan.name;
    o.descriptor.media_type = written->media_type;
    o.descriptor.digest = written->digest;
    o.descriptor.size = static_cast<int64_t>(written->size);
    o.diff_id = written->diff_id;
    o.cached = cached;
    o.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    Say(label + ": " + written->digest.Short() + " " + HumanBytes(written->size) + (cached ? " (cached)" : ""));
    return o;
  }
};

}  // namespace

Result<BuildResult> Build(const BuildOptions& opt) {
  Pipeline p{opt, {}, {}, LayerCache::Disabled(), {}, {}, archive::KnownDiffIds::In(opt.cache_dir)};
  // 1. Everything that can be wrong with the inputs is found before any output exists.
  auto spec = LoadSpec(opt.spec_path);
  if (!spec.ok()) return spec.error();
  p.spec = *spec;
  p.compression = opt.compression ? *opt.compression : spec->compression.value_or(archive::Compression::kGzip);
  if (!opt.output.digest.empty()) {
    return MakeError(ErrorKind::kInvalidInput, "build output " + opt.output.str() +
                                                   ": name the output by tag (the digest is what the build computes)");
  }
  if (opt.output.transport == ref::Transport::kDocker) {
    return MakeError(ErrorKind::kInvalidInput, "build output " + opt.output.str() +
                                                   ": write to oci:DIR[:TAG] or oci-archive:FILE[:TAG] (registry push "
                                                   "is not available in this version)");
  }
  std::shared_ptr<const oci::Image> base;
  std::optional<rootfs::ImageFs> base_fs;
  std::string base_passwd, base_group;
  if (!p.spec.base.scratch) {
    auto b = OpenBase(p.spec, BaseOptions{opt.download_dir, opt.registry, opt.progress});
    if (!b.ok()) return b.error().Context("base image");
    base = *b;
    p.base_manifest = base->digest();
    auto view = rootfs::ImageFs::Build(*base);
    if (!view.ok()) return view.error().Context("base image");
    base_fs.emplace(std::move(*view));
    auto pw = FileFromImage(*base_fs, "etc/passwd");
    if (!pw.ok()) return pw.error().Context("base image /etc/passwd");
    auto gr = FileFromImage(*base_fs, "etc/group");
    if (!gr.ok()) return gr.error().Context("base image /etc/group");
    base_passwd = *pw;
    base_group = *gr;
  }
  FetchOptions fetch;
  fetch.cache_dir = opt.download_dir;
  fetch.progress = opt.progress;
  IMGTOOL_TRY(FetchPackageUrls(p.spec, fetch));
  if (!opt.cache_dir.empty()) {
    auto c = LayerCache::Open(opt.cache_dir);
    if (c.ok()) p.cache = *c;
  }
  std::vector<PlannedLayer> plans;
  std::vector<PackageRecord> packages;
  PlanOptions plan_options;
  if (!opt.cache_dir.empty()) plan_options.staging_parent = opt.cache_dir + "/staging";
  for (const auto& l : p.spec.layers) {
    auto plan = p.Plan(l, plan_options);
    if (!plan.ok()) return plan.error().Context(opt.spec_path);
    for (const auto& n : plan->notes) p.Say(n);
    packages.insert(packages.end(), plan->packages.begin(), plan->packages.end());
    plans.push_back(std::move(*plan));
  }
  if (!opt.lock_path.empty()) {
    IMGTOOL_TRY(p.CheckLock(plans));
    p.Say("every input matches " + opt.lock_path);
  }
  std::string dpkg_status;
  bool has_debs = std::any_of(packages.begin(), packages.end(), [](const auto& x) { return x.kind == PackageKind::kDeb; });
  if (has_debs) {
    std::string base_status;
    if (base) {
      auto st = FileFromImage(*base_fs, "var/lib/dpkg/status", 64 << 20);
      if (!st.ok()) return st.error().Context("base image /var/lib/dpkg/status");
      base_status = *st;
    }
    auto status = DpkgStatus(base_status, packages);
    if (!status.ok()) return status.error().Context(opt.spec_path);
    dpkg_status = *status;
  }
  auto meta = MetadataEntries(p.spec, base_passwd, base_group, packages, dpkg_status);
  if (!meta.ok()) return meta.error().Context(opt.spec_path);
  PlannedLayer meta_plan;
  meta_plan.name = "imgtool-metadata";
  meta_plan.entries = *meta;
  meta_plan.inputs.resize(meta_plan.entries.size());
  meta_plan.fingerprint = "metadata\n";
  for (const auto& e : meta_plan.entries) {
    meta_plan.fingerprint += e.path + "\t" + std::to_string(e.mode) + "\t" + std::to_string(e.uid) + ":" +
                             std::to_string(e.gid) + "\t" + oci::Digest::Of(e.content).str() + "\n";
  }
  plans.push_back(std::move(meta_plan));

  // 2. Output: a layout folder, or a staging folder that becomes the archive.
  bool archive_out = opt.output.transport == ref::Transport::kOciArchive;
  std::string out_dir = opt.output.path;
  std::optional<fs::TempDir> staging;
  bool created_new = !archive_out && !fs::Exists(out_dir);
  if (archive_out) {
    auto t = fs::TempDir::Create(".imgtool-build-", fs::DirName(opt.output.path));
    if (!t.ok()) return t.error();
    staging = std::move(*t);
    out_dir = staging->path();
  }
  auto result = [&]() -> Result<BuildResult> {
    auto writer = layout::LayoutWriter::Open(out_dir);
    if (!writer.ok()) return writer.error();
    BuildResult r;
    oci::Json cfg = oci::NewImageConfig(p.spec.platform.os, p.spec.platform.architecture);
    oci::Manifest manifest;
    if (base) {
      cfg = base->config();
      manifest.annotations["org.opencontainers.image.base.digest"] = base->digest().str();
      if (std::string name = BaseName(p.spec.base); !name.empty()) {
        manifest.annotations["org.opencontainers.image.base.name"] = name;
      }
      auto sink = layout::LayoutSink::Open(out_dir, "build output");
      if (!sink.ok()) return sink.error();
      for (const auto& l : base->layers()) {
        // Streamed (or linked) and checked against the base's descriptor on the way.
        auto put = (*sink)->PutBlob(*l, nullptr);
        if (!put.ok()) return put.error().Context("base image");
        manifest.layers.push_back(oci::Descriptor{l->media_type(), l->digest(), l->size(), {}, std::nullopt, {}});
      }
    }
    std::string created = oci::Rfc3339(opt.epoch);
    for (size_t i = 0; i < plans.size(); ++i) {
      auto o = p.AddLayer(*writer, plans[i], i + 1, plans.size());
      if (!o.ok()) return o.error();
      manifest.layers.push_back(o->descriptor);
      oci::AppendLayerToConfig(cfg, o->diff_id, {created, "imgtool build: layer " + o->name, false});
      r.layers.push_back(*o);
    }
    cfg["created"] = created;
    cfg["config"]["User"] = std::to_string(p.spec.user.uid) + ":" + std::to_string(p.spec.user.gid);
    SetEnv(cfg, p.spec.env);
    if (!p.spec.workdir.empty()) {
      cfg["config"]["WorkingDir"] = p.spec.workdir;
    } else if (!base) {
      cfg["config"]["WorkingDir"] = p.spec.user.home;
    }
    if (p.spec.entrypoint) {
      cfg["config"]["Entrypoint"] = *p.spec.entrypoint;
      if (!p.spec.cmd) cfg["config"].erase("Cmd");
    }
    if (p.spec.cmd) cfg["config"]["Cmd"] = *p.spec.cmd;
    for (const auto& [k, v] : p.spec.labels) cfg["config"]["Labels"][k] = v;
    for (const auto& [k, v] : p.spec.stack) cfg["config"]["Labels"][StackLabel(k)] = v;

    auto cfg_bytes = oci::CanonicalJson(cfg);
    if (!cfg_bytes.ok()) return cfg_bytes.error();
    auto cfg_desc = writer->WriteBlob(*cfg_bytes, oci::kMediaTypeConfig);
    if (!cfg_desc.ok()) return cfg_desc.error();
    manifest.config = *cfg_desc;
    auto man_bytes = oci::SerializeManifest(manifest);
    if (!man_bytes.ok()) return man_bytes.error();
    auto man_desc = writer->WriteBlob(*man_bytes, oci::kMediaTypeManifest);
    if (!man_desc.ok()) return man_desc.error();
    IMGTOOL_TRY(writer->SetTag(*man_desc, opt.output.tag.empty() ? "latest" : opt.output.tag));
    // The SBOM is written beside the output and, in an oci: layout, stored as an artifact
    // referring to the image (pushed with it, found by its sha256-<hex>.sbom tag). An
    // oci-archive stays one image: `ctr images import` unpacks every tagged entry and
    // fails on an artifact, and archives exist to be loaded by such tools.
    SbomInput sbom_in{SbomImageName(p.spec.labels, opt.output.tag), *man_desc, opt.epoch, IMGTOOL_VERSION, packages};
    r.sbom_path = SbomPathFor(opt.output.path);
    if (archive_out) {
      auto doc = SpdxJson(sbom_in);
      if (!doc.ok()) return doc.error();
      IMGTOOL_TRY(fs::WriteFileAtomic(r.sbom_path, *doc));
    } else {
      auto sbom = WriteSbom(sbom_in, out_dir, r.sbom_path);
      if (!sbom.ok()) return sbom.error();
    }
    if (archive_out) IMGTOOL_TRY(layout::WriteOciArchive(out_dir, opt.output.path));
    r.manifest = *man_desc;
    r.config = *cfg_desc;
    r.output = opt.output.str();
    r.base_manifest = p.base_manifest;
    r.packages = packages;
    r.record_path = opt.record_path.empty() ? opt.output.path + ".build.json" : opt.record_path;
    auto record = BuildRecordJson(p.spec, r, p.record_inputs, opt.epoch, CompressionName(p.compression));
    if (!record.ok()) return record.error();
    IMGTOOL_TRY(fs::WriteFileAtomic(r.record_path, *record));
    return r;
  }();
  if (!result.ok() && created_new) (void)fs::RemoveTree(out_dir);
  return result;
}

}  // namespace imgtool::build
