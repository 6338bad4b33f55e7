#include "builder/builder.h"

#include <memory>

#include "builder/build_record.h"
#include "builder/image_build.h"
#include "builder/lock.h"
#include "builder/provenance.h"
#include "builder/sbom.h"
#include "builder/spec.h"
#include "builder/spec_platforms.h"
#include "fs/atomic_file.h"
#include "layout/layout_writer.h"
#include "layout/oci_archive.h"
#include "oci/media_types.h"

namespace imgtool::build {

namespace {

using Images = std::vector<std::unique_ptr<ImageBuild>>;

Status CheckOutputReference(const ref::Reference& output) {
  if (!output.digest.empty()) {
    return MakeError(ErrorKind::kInvalidInput, "build output " + output.str() +
                                                   ": name the output by tag (the digest is what the build computes)");
  }
  if (output.transport == ref::Transport::kDocker) {
    return MakeError(ErrorKind::kInvalidInput, "build output " + output.str() +
                                                   ": write to oci:DIR[:TAG] or oci-archive:FILE[:TAG] (registry push "
                                                   "is not available in this version)");
  }
  if (output.transport == ref::Transport::kDockerArchive) {
    return MakeError(ErrorKind::kInvalidInput, "build output " + output.str() +
                                                   ": write to oci:DIR[:TAG] or oci-archive:FILE[:TAG], then imgtool "
                                                   "copy it to docker-archive: (which holds no SBOM or signatures)");
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

// The SBOM beside the output and, in an oci: layout, one artifact per image referring to
// it (pushed with it, found by its sha256-<hex>.sbom tag). An oci-archive stays images
// only: `ctr images import` unpacks every tagged entry and fails on an artifact.
// Returns the document written beside the output (the provenance names its digest).
Result<std::string> WriteSboms(const Spec& spec, const BuildOptions& opt, const std::string& out_dir, bool archive_out,
                               const BuildResult& r) {
  std::string name = SbomImageName(spec.labels, opt.output.tag);
  if (!archive_out) {
    for (const auto& image : r.images) {
      auto doc = SpdxJson(SbomInput{name, image.manifest, opt.epoch, IMGTOOL_VERSION, image.packages});
      if (!doc.ok()) return doc.error();
      auto stored = WriteSbomArtifact(out_dir, image.manifest, *doc);
      if (!stored.ok()) return stored.error();
    }
  }
  Result<std::string> doc = std::string();
  if (r.is_index) {
    SbomIndexInput in{name, r.manifest, opt.epoch, IMGTOOL_VERSION, {}};
    for (const auto& image : r.images) in.images.push_back({image.platform, image.manifest, image.packages});
    doc = SpdxIndexJson(in);
  } else {
    doc = SpdxJson(SbomInput{name, r.manifest, opt.epoch, IMGTOOL_VERSION, r.images[0].packages});
  }
  if (!doc.ok()) return doc.error();
  IMGTOOL_TRY(fs::WriteFileAtomic(r.sbom_path, *doc));
  return *doc;
}

// The build record and the provenance that names its digest, beside the output.
Status WriteRecords(const Spec& spec, const BuildOptions& opt, const std::string& sbom, BuildResult& r) {
  r.record_path = opt.record_path.empty() ? opt.output.path + ".build.json" : opt.record_path;
  r.provenance_path = ProvenancePathFor(opt.output.path);
  auto record = BuildRecordJson(spec, r, opt.epoch, r.compression);
  if (!record.ok()) return record.error();
  auto provenance = ProvenanceJson(ProvenanceInputFor(spec, r, opt, sbom, *record));
  if (!provenance.ok()) return provenance.error();
  IMGTOOL_TRY(fs::WriteFileAtomic(r.record_path, *record));
  return fs::WriteFileAtomic(r.provenance_path, *provenance);
}

// Phase 2: the images, the index over them (a multi-platform build), the tag, the SBOMs,
// the archive, the record and the provenance.
Result<BuildResult> WriteInto(layout::LayoutWriter& writer, const Spec& spec, Images& images, const BuildOptions& opt,
                              const std::string& out_dir, bool archive_out) {
  BuildResult r;
  for (auto& image : images) {
    auto written = image->Write(writer, out_dir);
    if (!written.ok()) return written.error();
    r.images.push_back(std::move(*written));
  }
  r.is_index = !spec.platforms.empty() && !opt.platform;
  if (r.is_index) {
    auto index = WriteIndex(writer, r.images);
    if (!index.ok()) return index.error();
    r.manifest = *index;
  } else {
    r.manifest = r.images[0].manifest;
  }
  IMGTOOL_TRY(writer.SetTag(r.manifest, opt.output.tag.empty() ? "latest" : opt.output.tag));
  r.sbom_path = SbomPathFor(opt.output.path);
  auto sbom = WriteSboms(spec, opt, out_dir, archive_out, r);
  if (!sbom.ok()) return sbom.error();
  if (archive_out) IMGTOOL_TRY(layout::WriteOciArchive(out_dir, opt.output.path));
  r.output = opt.output.str();
  r.compression = CompressionName(images[0]->compression());
  IMGTOOL_TRY(WriteRecords(spec, opt, *sbom, r));
  return r;
}

// A failed build removes the layout folder when its own Open made it and no tag was
// committed there (LayoutWriter::RemoveIfCreated): a concurrent writer's image stays.
Result<BuildResult> WriteOutputs(const Spec& spec, Images& images, const BuildOptions& opt, const std::string& out_dir,
                                 bool archive_out) {
  auto writer = layout::LayoutWriter::Open(out_dir);
  if (!writer.ok()) return writer.error();
  auto result = WriteInto(*writer, spec, images, opt, out_dir, archive_out);
  if (!result.ok()) writer->RemoveIfCreated();
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
  // A layout folder, or a staging folder that becomes the archive; a failed build removes
  // a folder it created.
  bool archive_out = opt.output.transport == ref::Transport::kOciArchive;
  std::string out_dir = opt.output.path;
  std::optional<fs::TempDir> staging;
  if (archive_out) {
    auto t = fs::TempDir::Create(".imgtool-build-", fs::DirName(opt.output.path));
    if (!t.ok()) return t.error();
    staging = std::move(*t);
    out_dir = staging->path();
  }
  return WriteOutputs(*spec, *images, opt, out_dir, archive_out);
}

}  // namespace imgtool::build
