#include "remote/transfer.h"

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

#include "fs/atomic_file.h"
#include "layout/layout_reader.h"
#include "layout/layout_writer.h"
#include "oci/canonical_json.h"

namespace imgtool::remote {

namespace {

constexpr int64_t kMaxManifestBytes = 8 << 20;

// One side of a copy: a registry repository, or a layout folder (an oci-archive is
// extracted to / assembled in a temporary folder).
struct Endpoint {
  ref::Reference ref;
  std::shared_ptr<Registry> reg;
  std::string dir;
  std::shared_ptr<fs::TempDir> tmp;
  std::optional<layout::LayoutWriter> writer;
  bool created = false;  // the destination folder did not exist before this copy
  bool docker() const { return ref.transport == ref::Transport::kDocker; }
};

std::string TopRef(const ref::Reference& r) {
  if (!r.digest.empty()) return r.digest;
  return r.tag.empty() ? "latest" : r.tag;
}

// The part of opening either end that does not depend on the direction: a registry
// connection for docker://, the folder otherwise.
Result<Endpoint> OpenEndpoint(const ref::Reference& ref, const RegistryOptions& ropts) {
  Endpoint e;
  e.ref = ref;
  if (e.docker()) {
    auto reg = Registry::Connect(ref.host, ropts);
    if (!reg.ok()) return reg.error();
    e.reg = *reg;
  }
  e.dir = ref.path;
  return e;
}

Result<Endpoint> OpenSource(const ref::Reference& ref, const RegistryOptions& ropts) {
  auto opened = OpenEndpoint(ref, ropts);
  if (!opened.ok() || opened->docker()) return opened;
  Endpoint e = std::move(*opened);
  if (ref.transport == ref::Transport::kOciArchive) {
    auto t = fs::TempDir::Create("imgtool-copy-src-");
    if (!t.ok()) return t.error();
    e.tmp = std::make_shared<fs::TempDir>(std::move(*t));
    IMGTOOL_TRY(layout::ExtractOciArchive(ref.path, e.tmp->path()));
    e.dir = e.tmp->path();
  }
  return e;
}

Result<Endpoint> OpenSink(const ref::Reference& ref, const RegistryOptions& ropts) {
  auto opened = OpenEndpoint(ref, ropts);
  if (!opened.ok() || opened->docker()) return opened;
  Endpoint e = std::move(*opened);
  if (ref.transport == ref::Transport::kOciArchive) {
    auto t = fs::TempDir::Create("imgtool-copy-dst-");
    if (!t.ok()) return t.error();
    e.tmp = std::make_shared<fs::TempDir>(std::move(*t));
    e.dir = e.tmp->path();
  } else {
    e.created = !fs::Exists(e.dir);
  }
  auto w = layout::LayoutWriter::Open(e.dir);
  if (!w.ok()) return w.error();
  e.writer = std::move(*w);
  return e;
}

Result<RawManifest> ReadTop(const Endpoint& src) {
  if (src.docker()) return src.reg->GetManifest(src.ref.repository, TopRef(src.ref));
  auto desc = layout::ResolveManifest(src.dir, src.ref.tag);
  if (!desc.ok()) return desc.error();
  auto raw = layout::ReadVerifiedBlob(src.dir, *desc, kMaxManifestBytes);
  if (!raw.ok()) return raw.error();
  return RawManifest{*raw, desc->media_type, desc->digest};
}

Result<RawManifest> ReadChild(const Endpoint& src, const oci::Descriptor& d) {
  if (src.docker()) {
    auto m = src.reg->GetManifest(src.ref.repository, d.digest.str());
    if (!m.ok()) return m.error();
    m->media_type = d.media_type;
    return m;
  }
  auto raw = layout::ReadVerifiedBlob(src.dir, d, kMaxManifestBytes);
  if (!raw.ok()) return raw.error();
  return RawManifest{*raw, d.media_type, d.digest};
}

// What a manifest names: an index its manifests; an image or artifact its config,
// layers (and an artifact manifest's blobs).
Status Refs(const RawManifest& m, std::vector<oci::Descriptor>& children, std::vector<oci::Descriptor>& blobs) {
  auto j = oci::Json::parse(m.bytes, nullptr, false);
  std::string what = "manifest " + m.digest.Short();
  if (!j.is_object()) return MakeError(ErrorKind::kInvalidInput, what + ": not a JSON object");
  auto list = [&](const char* key, std::vector<oci::Descriptor>& out) -> Status {
    if (!j.contains(key)) return Status::Ok();
    if (!j[key].is_array()) return MakeError(ErrorKind::kInvalidInput, what + ": $." + key + " is not an array");
    for (size_t i = 0; i < j[key].size(); ++i) {
      auto d = oci::DescriptorFromJson(j[key][i], what + ": $." + key + "[" + std::to_string(i) + "]");
      if (!d.ok()) return d.error();
      out.push_back(*d);
    }
    return Status::Ok();
  };
  IMGTOOL_TRY(list("manifests", children));
  if (j.contains("config")) {
    auto d = oci::DescriptorFromJson(j["config"], what + ": $.config");
    if (!d.ok()) return d.error();
    blobs.push_back(*d);
  }
  IMGTOOL_TRY(list("layers", blobs));
  IMGTOOL_TRY(list("blobs", blobs));
  return Status::Ok();
}

// Walks the graph depth first: children before parents, so a manifest is written
// only after everything it names.
Status Collect(const Endpoint& src, const RawManifest& m, int depth, std::vector<RawManifest>& manifests,
               std::vector<oci::Descriptor>& blobs) {
  if (depth > 4) return MakeError(ErrorKind::kInvalidInput, "manifest " + m.digest.Short() + ": nested too deep");
  std::vector<oci::Descriptor> children, found;
  IMGTOOL_TRY(Refs(m, children, found));
  for (const auto& c : children) {
    auto child = ReadChild(src, c);
    if (!child.ok()) return child.error();
    IMGTOOL_TRY(Collect(src, *child, depth + 1, manifests, blobs));
  }
  for (const auto& b : found) {
    bool seen = false;
    for (const auto& x : blobs) seen = seen || x.digest == b.digest;
    if (!seen) blobs.push_back(b);
  }
  manifests.push_back(m);
  return Status::Ok();
}

Status CopyBlob(const Endpoint& src, const Endpoint& dst, const oci::Descriptor& d, const TransferOptions& opts,
                BlobRecord& rec) {
  rec.digest = d.digest;
  rec.media_type = d.media_type;
  rec.size = d.size;
  auto emit = [&](BlobEvent::Kind k, uint64_t done, const std::string& action) {
    if (opts.on_blob) opts.on_blob(BlobEvent{k, d.digest, d.media_type, d.size, done, action});
  };
  auto progress = [&](uint64_t done) { emit(BlobEvent::Kind::kProgress, done, ""); };
  emit(BlobEvent::Kind::kStart, 0, "");
  if (dst.docker()) {
    const std::string& repo = dst.ref.repository;
    auto has = dst.reg->HeadBlob(repo, d.digest, true);
    if (!has.ok()) return has.error();
    if (*has) {
      rec.action = "exists";
    } else {
      std::string path;
      fs::TempDir staging;
      if (src.docker()) {
        if (src.reg->host() == dst.reg->host()) {
          auto mounted = dst.reg->MountBlob(repo, src.ref.repository, d.digest);
          if (!mounted.ok()) return mounted.error();
          if (*mounted) rec.action = "mounted";
        }
        if (rec.action.empty()) {
          // Another registry: stage through a temporary file (never in memory).
          auto t = fs::TempDir::Create("imgtool-blob-");
          if (!t.ok()) return t.error();
          staging = std::move(*t);
          fs::AtomicFile f;
          IMGTOOL_TRY(f.Open(staging.path() + "/blob"));
          IMGTOOL_TRY(src.reg->FetchBlob(src.ref.repository, d, f, progress));
          IMGTOOL_TRY(f.Commit());
          path = staging.path() + "/blob";
        }
      } else {
        path = layout::BlobPathIn(src.dir, d.digest);
      }
      if (rec.action.empty()) {
        auto up = UploadBlob(*dst.reg, repo, d, path, opts.upload, progress);
        if (!up.ok()) return up.error();
        rec.action = up->resumed ? "resumed" : "uploaded";
        rec.bytes_sent = up->bytes_sent;
        rec.resumed_from = up->resumed_from;
      }
    }
  } else if (dst.writer->HasBlob(d.digest, d.size)) {
    rec.action = "exists";
  } else if (src.docker()) {
    fs::AtomicFile f;
    IMGTOOL_TRY(dst.writer->OpenBlobFile(f));
    IMGTOOL_TRY(src.reg->FetchBlob(src.ref.repository, d, f, progress));
    IMGTOOL_TRY(dst.writer->CommitBlob(f, d.digest));
    rec.action = "downloaded";
    rec.bytes_sent = static_cast<uint64_t>(d.size);
  } else {
    std::string from = layout::BlobPathIn(src.dir, d.digest);
    if (!fs::Exists(from)) return MakeError(ErrorKind::kNotFound, "blob " + d.digest.str() + ": missing in " + src.dir);
    IMGTOOL_TRY(dst.writer->ImportBlob(from, d.digest));
    rec.action = "linked";
  }
  emit(BlobEvent::Kind::kDone, static_cast<uint64_t>(d.size), rec.action);
  return Status::Ok();
}

// Runs CopyBlob over `blobs` with `jobs` threads; the first error stops new work.
Status CopyBlobs(const Endpoint& src, const Endpoint& dst, const std::vector<oci::Descriptor>& blobs,
                 const TransferOptions& opts, std::vector<BlobRecord>& records) {
  records.assign(blobs.size(), BlobRecord());
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::optional<Error> first;
  auto work = [&] {
    for (;;) {
      size_t i = next++;
      if (i >= blobs.size()) return;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (first) return;
      }
      Status st = CopyBlob(src, dst, blobs[i], opts, records[i]);
      if (!st.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (!first) first = st.error();
        return;
      }
    }
  };
  size_t n = std::min<size_t>(blobs.size(), static_cast<size_t>(std::max(1, opts.jobs)));
  std::vector<std::thread> threads;
  for (size_t i = 1; i < n; ++i) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (first) return *first;
  return Status::Ok();
}

Status WriteManifests(Endpoint& dst, const std::vector<RawManifest>& manifests) {
  const RawManifest& top = manifests.back();
  if (!dst.ref.digest.empty() && dst.ref.digest != top.digest.str()) {
    return MakeError(ErrorKind::kInvalidInput, dst.ref.str() + ": the source's digest is " + top.digest.str());
  }
  for (size_t i = 0; i < manifests.size(); ++i) {
    const RawManifest& m = manifests[i];
    bool is_top = i + 1 == manifests.size();
    if (dst.docker()) {
      IMGTOOL_TRY(dst.reg->PutManifest(dst.ref.repository, is_top ? TopRef(dst.ref) : m.digest.str(), m));
      continue;
    }
    auto desc = dst.writer->WriteBlob(m.bytes, m.media_type);
    if (!desc.ok()) return desc.error();
    if (is_top) IMGTOOL_TRY(dst.writer->SetTag(*desc, dst.ref.tag));
  }
  if (dst.ref.transport == ref::Transport::kOciArchive) {
    IMGTOOL_TRY(layout::WriteOciArchive(dst.dir, dst.ref.path));
  }
  return Status::Ok();
}

}  // namespace

Result<CopyReport> Copy(const ref::Reference& src_ref, const ref::Reference& dst_ref,
                        const TransferOptions& opts) {
  auto src = OpenSource(src_ref, opts.source);
  if (!src.ok()) return src.error().Context(src_ref.str());
  auto top = ReadTop(*src);
  if (!top.ok()) return top.error().Context(src_ref.str());
  std::vector<RawManifest> manifests;
  std::vector<oci::Descriptor> blobs;
  IMGTOOL_TRY(Collect(*src, *top, 0, manifests, blobs));

  auto dst = OpenSink(dst_ref, opts.destination);
  if (!dst.ok()) return dst.error().Context(dst_ref.str());
  CopyReport report;
  Status st = CopyBlobs(*src, *dst, blobs, opts, report.blobs);
  if (st.ok()) st = WriteManifests(*dst, manifests);
  if (!st.ok()) {
    // A pull into a new folder leaves nothing behind when it fails.
    if (dst->created) (void)fs::RemoveTree(dst->dir);
    return st.error();
  }
  report.digest = top->digest;
  report.media_type = top->media_type;
  for (const auto& m : manifests) report.manifests.push_back(m.digest);
  for (const auto& b : report.blobs) report.bytes_sent += b.bytes_sent;
  return report;
}

}  // namespace imgtool::remote
