#include "transport/copy.h"

#include "oci/quote.h"

namespace imgtool::transport {

std::vector<std::string> ArtifactTags(const oci::Digest& d) {
  std::string base = "sha256-" + d.hex();
  return {base + ".sig", base + ".att", base + ".sbom", base};
}

Result<std::vector<std::string>> WriteArtifacts(const oci::Node& node, const oci::Repository& from, oci::Sink& sink,
                                                const WriteOptions& opts, WriteReport& report) {
  auto manifests = Manifests(node);
  if (!manifests.ok()) return manifests.error();
  std::vector<std::string> written;
  for (const auto& m : *manifests) {
    for (const auto& tag : ArtifactTags(m.descriptor.digest)) {
      auto artifact = from.Open(tag);
      if (!artifact.ok() && artifact.error().kind == ErrorKind::kNotFound) continue;
      if (!artifact.ok()) return artifact.error().Context("reading " + tag);
      WriteReport part;
      IMGTOOL_TRY(Write(*artifact, sink, tag, opts, part));
      report.blobs.insert(report.blobs.end(), part.blobs.begin(), part.blobs.end());
      report.bytes_sent += part.bytes_sent;
      written.push_back(tag);
    }
  }
  return written;
}

namespace {

// A docker-archive holds one image per entry: an index is refused before anything is
// read, naming the platforms --platform can pick, and so is an artifact.
Status CheckFitsDockerArchive(const oci::Node& node, const ref::Reference& dst) {
  if (dst.transport != ref::Transport::kDockerArchive) return Status::Ok();
  if (!node.is_index() && node.image->is_artifact()) {
    return MakeError(ErrorKind::kInvalidInput, dst.str() + ": an artifact (" +
                                                   oci::Quoted(node.image->artifact_type(), '\'') +
                                                   ") cannot go into a docker-archive, which holds images only");
  }
  if (!node.is_index()) return Status::Ok();
  std::string platforms;
  for (const auto& c : node.index->children()) {
    if (!c.platform) continue;
    std::string p = oci::PlatformString(*c.platform);
    if (platforms.find(p) != std::string::npos) continue;
    platforms += (platforms.empty() ? "" : ", ") + p;
    if (platforms.size() > 200) break;
  }
  return MakeError(ErrorKind::kInvalidInput, dst.str() +
                                                 ": a docker-archive holds single images, not an index: choose "
                                                 "one with --platform" +
                                                 (platforms.empty() ? "" : " (" + platforms + ")"));
}

// What a reader of `dst` gets: a docker-archive's manifest is made up when it is read
// (tarball/saved_image.h), so its digest is not the source's.
Status ReportDestinationDigest(const ref::Reference& dst, const CopyOptions& opts, CopyReport& report) {
  if (dst.transport != ref::Transport::kDockerArchive) return Status::Ok();
  auto written = Open(dst, opts.source);
  if (!written.ok()) return written.error().Context("reading back " + dst.str());
  report.digest = written->node.descriptor.digest;
  report.media_type = written->node.descriptor.media_type;
  return Status::Ok();
}

}  // namespace

Result<CopyReport> Copy(const ref::Reference& src, const ref::Reference& dst, const CopyOptions& opts) {
  auto opened = Open(src, opts.source);
  if (!opened.ok()) return opened.error();
  auto selected = SelectPlatform(opened->node, opts.platform);
  if (!selected.ok()) return selected.error().Context(src.str());
  opened->node = *selected;
  IMGTOOL_TRY(CheckFitsDockerArchive(opened->node, dst));
  const oci::Digest& top = opened->node.descriptor.digest;
  if (!dst.digest.empty() && dst.digest != top.str()) {
    return MakeError(ErrorKind::kInvalidInput, dst.str() + ": the source's digest is " + top.str());
  }
  auto sink = OpenSink(dst, opts.destination);
  if (!sink.ok()) return sink.error().Context(dst.str());
  CopyReport report;
  Status st = Write(opened->node, **sink, TagAt(dst), opts.write, report);
  // Signatures and other artifacts have no place in a docker-archive (skopeo refuses them too).
  if (st.ok() && opts.artifacts && dst.transport != ref::Transport::kDockerArchive) {
    auto carried = WriteArtifacts(opened->node, *opened->repository, **sink, opts.write, report);
    if (carried.ok()) report.artifacts = *carried;
    st = carried.ok() ? Status::Ok() : Status(carried.error());
  }
  if (st.ok()) st = (*sink)->Commit();
  if (!st.ok()) {
    // A pull into a new folder leaves nothing behind when it fails.
    (*sink)->Discard();
    return st.error();
  }
  IMGTOOL_TRY(ReportDestinationDigest(dst, opts, report));
  return report;
}

}  // namespace imgtool::transport
