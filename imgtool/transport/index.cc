#include "transport/index.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "oci/image_config.h"
#include "oci/media_types.h"

namespace imgtool::transport {

namespace {

// What one entry of the new index points at, and where it came from.
struct Member {
  oci::Node node;
  std::shared_ptr<const oci::Repository> repository;
};

// The entry for a member: its own descriptor, with the platform its config states (an
// artifact or a nested index has none); an image whose config cannot say is refused.
Result<oci::Descriptor> EntryFor(const oci::Node& node) {
  oci::Descriptor d = node.descriptor;
  d.annotations.clear();
  if (node.image && !node.image->is_artifact()) {
    const auto& config = node.image->config();
    if (!config.ok()) return config.error();
    oci::Platform p = oci::ConfigPlatform(*config);
    if (!p.os.empty() && !p.architecture.empty()) d.platform = p;
  }
  if (node.image && node.image->is_artifact()) d.artifact_type = node.image->artifact_type();
  return d;
}

// A member that is an index sits one level down in the new index, so it may span one
// index level less than a top (oci::kMaxIndexDepth): else the index written would be
// one no verb reads. (Entries of --base already have their levels: the base's top is
// the new index's place.)
Status CheckMemberDepth(const oci::Node& member) {
  if (!member.is_index()) return Status::Ok();
  auto manifests = Manifests(member);
  if (!manifests.ok()) return manifests.error();
  int levels = 0;
  for (const auto& m : *manifests) {
    if (m.is_index()) levels = std::max(levels, m.index->level());
  }
  return oci::CheckIndexDepth(member.descriptor.digest, levels + 1);
}

Status CheckPlatforms(const std::vector<oci::Descriptor>& entries) {
  std::map<std::string, oci::Digest> seen;
  for (const auto& e : entries) {
    if (!e.platform) continue;
    auto [it, fresh] = seen.emplace(oci::PlatformString(*e.platform), e.digest);
    if (!fresh) {
      return MakeError(ErrorKind::kInvalidInput, "two images for " + it->first + ": " + it->second.Short() + " and " +
                                                     e.digest.Short() + " (an index holds one image per platform)");
    }
  }
  return Status::Ok();
}

// The base index's entries, each opened so it can be copied along.
Status AddBase(const ref::Reference& base, const CopyOptions& copy, std::vector<Member>& members,
               std::vector<oci::Descriptor>& entries) {
  auto opened = Open(base, copy.source);
  if (!opened.ok()) return opened.error().Context("--base");
  if (!opened->node.is_index()) return MakeError(ErrorKind::kInvalidInput, "--base " + base.str() + ": not an index");
  std::set<std::tuple<oci::Digest, int64_t, std::string>> opened_entries;
  for (const auto& c : opened->node.index->children()) {
    entries.push_back(c);
    // An entry repeated as it was is copied once (each copy walks the whole image).
    if (!opened_entries.emplace(c.digest, c.size, c.media_type).second) continue;
    auto child = opened->node.index->Child(c);
    if (!child.ok()) return child.error().Context("--base");
    members.push_back({*child, opened->repository});
  }
  return Status::Ok();
}

Status WriteMembers(const std::vector<Member>& members, oci::Sink& sink, const CopyOptions& copy, IndexReport& report) {
  for (const auto& m : members) {
    IMGTOOL_TRY(Write(m.node, sink, std::nullopt, copy.write, report));
    if (!copy.artifacts) continue;
    auto carried = WriteArtifacts(m.node, *m.repository, sink, copy.write, report);
    if (!carried.ok()) return carried.error();
    report.artifacts.insert(report.artifacts.end(), carried->begin(), carried->end());
  }
  return Status::Ok();
}

}  // namespace

Result<IndexReport> AssembleIndex(const std::vector<ref::Reference>& images, const ref::Reference& dst,
                                  const IndexOptions& opts) {
  if (!dst.digest.empty()) {
    return MakeError(ErrorKind::kInvalidInput, dst.str() + ": name the index by tag (its digest is what is computed)");
  }
  std::vector<Member> members;
  oci::Index index;
  index.annotations = opts.annotations;
  if (opts.base) IMGTOOL_TRY(AddBase(*opts.base, opts.copy, members, index.manifests));
  for (const auto& r : images) {
    auto opened = Open(r, opts.copy.source);
    if (!opened.ok()) return opened.error();
    auto depth = CheckMemberDepth(opened->node);
    if (!depth.ok()) return depth.error().Context(r.str() + " inside the new index");
    auto entry = EntryFor(opened->node);
    if (!entry.ok()) return entry.error().Context(r.str());
    members.push_back({opened->node, opened->repository});
    index.manifests.push_back(std::move(*entry));
  }
  if (index.manifests.empty()) return MakeError(ErrorKind::kInvalidInput, "an index needs at least one image");
  IMGTOOL_TRY(CheckPlatforms(index.manifests));
  auto bytes = oci::SerializeIndex(index);
  if (!bytes.ok()) return bytes.error();
  oci::Descriptor top{std::string(oci::kMediaTypeIndex),
                      oci::Digest::Of(*bytes),
                      static_cast<int64_t>(bytes->size()),
                      {},
                      std::nullopt};

  auto sink = OpenSink(dst, opts.copy.destination);
  if (!sink.ok()) return sink.error().Context(dst.str());
  IndexReport report;
  Status st = WriteMembers(members, **sink, opts.copy, report);
  if (st.ok()) st = (*sink)->PutManifest(top, *bytes, TagAt(dst));
  if (st.ok()) st = (*sink)->Commit();
  if (!st.ok()) {
    (*sink)->Discard();
    return st.error();
  }
  report.digest = top.digest;
  report.media_type = top.media_type;
  report.manifests.push_back(top.digest);
  report.entries = index.manifests;
  return report;
}

}  // namespace imgtool::transport
