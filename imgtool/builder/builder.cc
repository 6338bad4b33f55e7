#include "builder/builder.h"

#include <memory>
#include <mutex>

#include "builder/blob_store.h"
#include "builder/build_record.h"
#include "builder/image_build.h"
#include "builder/lock.h"
#include "builder/provenance.h"
#include "builder/sbom.h"
#include "builder/spec.h"
#include "builder/spec_platforms.h"
#include "fs/atomic_file.h"
#include "layout/layout_writer.h"
#include "oci/human_bytes.h"
#include "oci/media_types.h"
#include "transport/open.h"
#include "transport/write.h"

namespace imgtool::build {

namespace {

using Images = std::vector<std::unique_ptr<ImageBuild>>;

// What a build can write is the sink's business (transport/open.h): a docker-archive
// refuses an index or an artifact itself. Only a digest is refused here.
Status CheckOutputReference(const ref::Reference& output) {
  if (!output.digest.empty()) {
    return MakeError(ErrorKind::kInvalidInput, "build output " + output.str() +
                                                   ": name the output by tag (the digest is what the build computes)");
  }
  return Status::Ok();
}

// The platforms this build writes: every platform of the spec, or --platform's alone.
Result<std::vector<oci::Platform>> SelectedPlatforms(const Spec& spec, const BuildOptions& opt) {
  if (!opt.platform) return SpecPlatforms(spec);
  auto resolved = ForPlatform(spec, *opt.platform);  // names the spec's platforms when not one
  if (!resolved.ok()) return resolved.error().Context("--platform");
  return std::vector<oci::Platform>{*opt.platform};
}

// Phase 1: every image's inputs, checked before any output exists.
Result<Images> PrepareImages(const Spec& spec, const BuildOptions& opt) {
  auto platforms = SelectedPlatforms(spec, opt);
  if (!platforms.ok()) return platforms.error();
  Images images;
  for (const auto& p : *platforms) {
    auto resolved = ForPlatform(spec, p);
    if (!resolved.ok()) return resolved.error().Context(opt.spec_path);
    auto image = ImageBuild::Prepare(std::move(*resolved), opt);
    if (!image.ok()) return image.error();
    images.push_back(std::move(*image));
  }
  return images;
}

// --locked: the inputs as they are now must equal the lock (for --platform, that
// platform's part of a multi-platform lock).
// Each file a layer then reads must be the bytes that were compared (ExpectLocked): the
// comparison hashed it by one open, the layer reads it by another.
Status CheckLock(const Spec& spec, Images& images, const BuildOptions& opt) {
  auto locked = ReadLock(opt.lock_path);
  if (!locked.ok()) return locked.error();
  Lock now;
  std::vector<Lock> per_image;
  for (const auto& image : images) {
    auto lock = image->LockNow();
    if (!lock.ok()) return lock.error();
    per_image.push_back(*lock);
    if (!spec.platforms.empty()) TagPlatform(*lock, image->spec().platform);
    now.inputs.insert(now.inputs.end(), lock->inputs.begin(), lock->inputs.end());
  }
  if (opt.platform) *locked = OnlyPlatform(*locked, *opt.platform);
  IMGTOOL_TRY(CompareLock(*locked, now, opt.lock_path));
  for (size_t i = 0; i < images.size(); ++i) images[i]->ExpectLocked(per_image[i]);
  return Status::Ok();
}

// The index over a multi-platform build's images, in the spec's platform order.
Result<oci::Descriptor> WriteIndex(layout::LayoutWriter& writer, const std::vector<ImageResult>& images) {
  oci::Index index;
  for (const auto& image : images) {
    oci::Descriptor d = image.manifest;
    d.platform = image.platform;
    index.manifests.push_back(d);
  }
  auto bytes = oci::SerializeIndex(index);
  if (!bytes.ok()) return bytes.error();
  return writer.WriteBlob(*bytes, oci::kMediaTypeIndex);
}

// Hands what the store holds under `d` to the sink, under `tag`, by the walk every copy
// takes (transport/write.h). Blobs the sink did not already hold (a registry's) are
// reported as they land.
Status Hand(const BlobStore& store, const oci::Descriptor& d, oci::Sink& sink, const std::string& tag,
            const BuildOptions& opt) {
  auto node = store.Open(d);
  if (!node.ok()) return node.error();
  transport::WriteOptions wo;
  std::mutex mu;  // on_blob runs on the walk's worker threads
  if (opt.progress) {
    wo.on_blob = [&](const transport::BlobEvent& e) {
      if (e.kind != transport::BlobEvent::Kind::kDone || e.action == "exists") return;
      std::lock_guard<std::mutex> lock(mu);
      opt.progress(sink.name() + ": " + e.digest.Short() + " " + HumanBytes(static_cast<uint64_t>(e.size)) + " " +
                   e.action);
    };
  }
  transport::WriteReport report;
  return transport::Write(*node, sink, tag, wo, report);
}

// Where the output holds artifacts, one SBOM artifact per image referring to it (found by
// its sha256-<hex>.sbom tag). An oci-archive stays images only: `ctr images import`
// unpacks every tagged entry and fails on an artifact (transport::ImagesOnly).
// Returns the document for beside the output (the provenance names its digest).
Result<std::string> WriteSboms(const Spec& spec, const BuildOptions& opt, BlobStore& store, oci::Sink& sink,
                               const BuildResult& r) {
  std::string name = SbomImageName(spec.labels, opt.output.tag);
  if (!transport::ImagesOnly(opt.output)) {
    for (const auto& image : r.images) {
      auto doc = SpdxJson(SbomInput{name, image.manifest, opt.epoch, IMGTOOL_VERSION, image.packages});
      if (!doc.ok()) return doc.error();
      auto staged = StageSbomArtifact(store.writer(), image.manifest, *doc);
      if (!staged.ok()) return staged.error().Context("storing SBOM");
      IMGTOOL_TRY(Hand(store, *staged, sink, SbomTag(image.manifest.digest), opt));
    }
  }
  if (!r.is_index) return SpdxJson(SbomInput{name, r.manifest, opt.epoch, IMGTOOL_VERSION, r.images[0].packages});
  SbomIndexInput in{name, r.manifest, opt.epoch, IMGTOOL_VERSION, {}};
  for (const auto& image : r.images) in.images.push_back({image.platform, image.manifest, image.packages});
  return SpdxIndexJson(in);
}

// The SBOM, the build record and the provenance that names their digests, beside the
// output (transport::BesidePath: for a registry, in the current folder).
Status WriteRecords(const Spec& spec, const BuildOptions& opt, const std::string& sbom, BuildResult& r) {
  std::string beside = transport::BesidePath(opt.output);
  r.sbom_path = SbomPathFor(beside);
  r.record_path = opt.record_path.empty() ? beside + ".build.json" : opt.record_path;
  r.provenance_path = ProvenancePathFor(beside);
  auto record = BuildRecordJson(spec, r, opt.epoch, r.compression);
  if (!record.ok()) return record.error();
  auto provenance = ProvenanceJson(ProvenanceInputFor(spec, r, opt, sbom, *record));
  if (!provenance.ok()) return provenance.error();
  IMGTOOL_TRY(fs::WriteFileAtomic(r.sbom_path, sbom));
  IMGTOOL_TRY(fs::WriteFileAtomic(r.record_path, *record));
  return fs::WriteFileAtomic(r.provenance_path, *provenance);
}

// Phase 2: the images and the index over them (a multi-platform build) staged in the
// store, handed to the sink under the output's tag, then the SBOM artifacts; the sink
// committed (an archive is written now); then the files beside the output.
Result<BuildResult> WriteInto(oci::Sink& sink, BlobStore& store, const Spec& spec, Images& images,
                              const BuildOptions& opt) {
  BuildResult r;
  for (auto& image : images) {
    auto written = image->Write(store.writer(), store.dir());
    if (!written.ok()) return written.error();
    r.images.push_back(std::move(*written));
  }
  r.is_index = !spec.platforms.empty() && !opt.platform;
  if (r.is_index) {
    auto index = WriteIndex(store.writer(), r.images);
    if (!index.ok()) return index.error();
    r.manifest = *index;
  } else {
    r.manifest = r.images[0].manifest;
  }
  IMGTOOL_TRY(Hand(store, r.manifest, sink, transport::TagOrLatest(opt.output), opt));
  auto sbom = WriteSboms(spec, opt, store, sink, r);
  if (!sbom.ok()) return sbom.error();
  IMGTOOL_TRY(sink.Commit());
  r.output = opt.output.str();
  r.compression = CompressionName(images[0]->compression());
  IMGTOOL_TRY(WriteRecords(spec, opt, *sbom, r));
  return r;
}

// The sink is opened only now, every input checked. A failed build discards it: a
// layout folder its Open made is removed unless something was tagged there meanwhile
// (LayoutWriter::RemoveIfCreated), an archive is left as it was.
Result<BuildResult> WriteOutputs(const Spec& spec, Images& images, const BuildOptions& opt) {
  transport::SinkOptions so;
  so.registry = opt.registry;
  auto sink = transport::OpenSink(opt.output, so);
  if (!sink.ok()) return sink.error();
  auto result = [&]() -> Result<BuildResult> {
    auto store = BlobStore::For(**sink);
    if (!store.ok()) return store.error();
    return WriteInto(**sink, *store, spec, images, opt);
  }();
  if (!result.ok()) (*sink)->Discard();
  return result;
}

}  // namespace

Result<BuildResult> Build(const BuildOptions& opt) {
  IMGTOOL_TRY(CheckOutputReference(opt.output));
  auto spec = LoadSpec(opt.spec_path);
  if (!spec.ok()) return spec.error();
  auto images = PrepareImages(*spec, opt);
  if (!images.ok()) return images.error();
  if (!opt.lock_path.empty()) {
    IMGTOOL_TRY(CheckLock(*spec, *images, opt));
    if (opt.progress) opt.progress("every input matches " + opt.lock_path);
  }
  return WriteOutputs(*spec, *images, opt);
}

}  // namespace imgtool::build
