#include "transport/write.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

namespace imgtool::transport {

namespace {

// What Collect has seen: manifests collected, and the entries (digest, size, media type)
// already opened, so that an index naming one image 20,000 times reads it once, while an
// entry naming it with another claim is still opened and checked against that claim.
struct Seen {
  std::set<oci::Digest> collected;
  std::set<std::tuple<oci::Digest, int64_t, std::string>> opened;
};

// Children before parents, each manifest once. The recursion ends within
// oci::kMaxIndexDepth levels: ImageIndex::Child refuses an index nested deeper.
Status Collect(const oci::Node& node, std::vector<oci::Node>& out, Seen& seen) {
  if (!seen.collected.insert(node.descriptor.digest).second) return Status::Ok();
  if (node.is_index()) {
    for (const auto& c : node.index->children()) {
      if (!seen.opened.emplace(c.digest, c.size, c.media_type).second) continue;
      auto child = node.index->Child(c);
      if (!child.ok()) return child.error();
      IMGTOOL_TRY(Collect(*child, out, seen));
    }
  }
  out.push_back(node);
  return Status::Ok();
}

// Every blob the images name, each once (layers shared between platforms are common).
std::vector<std::shared_ptr<const oci::Blob>> BlobsOf(const std::vector<oci::Node>& manifests) {
  std::vector<std::shared_ptr<const oci::Blob>> blobs;
  std::set<oci::Digest> seen;
  for (const auto& m : manifests) {
    if (!m.image) continue;
    auto add = [&](const std::shared_ptr<const oci::Blob>& b) {
      if (seen.insert(b->digest()).second) blobs.push_back(b);
    };
    add(m.image->config_blob());
    for (const auto& l : m.image->layers()) add(l);
  }
  // In manifest order (config, then layers bottom up), as every registry client sends them.
  return blobs;
}

Status PutOne(oci::Sink& sink, const oci::Blob& b, const WriteOptions& opts, BlobRecord& rec) {
  rec.digest = b.digest();
  rec.media_type = b.media_type();
  rec.size = b.size();
  auto emit = [&](BlobEvent::Kind k, uint64_t done, const std::string& action) {
    if (opts.on_blob) opts.on_blob(BlobEvent{k, b.digest(), b.media_type(), b.size(), done, action});
  };
  emit(BlobEvent::Kind::kStart, 0, "");
  auto out = sink.PutBlob(b, [&](uint64_t done) { emit(BlobEvent::Kind::kProgress, done, ""); });
  // Source errors name the source's blob, sink errors their destination: no prefix here.
  if (!out.ok()) return out.error();
  rec.action = out->action;
  rec.bytes_sent = out->bytes_sent;
  rec.resumed_from = out->resumed_from;
  emit(BlobEvent::Kind::kDone, static_cast<uint64_t>(b.size()), rec.action);
  return Status::Ok();
}

// `jobs` threads take blobs in order; the first error stops new work.
Status PutBlobs(oci::Sink& sink, const std::vector<std::shared_ptr<const oci::Blob>>& blobs, const WriteOptions& opts,
                std::vector<BlobRecord>& records) {
  records.assign(blobs.size(), BlobRecord());
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::optional<Error> first;
  auto work = [&] {
    for (size_t i = next++; i < blobs.size(); i = next++) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (first) return;
      }
      Status st = PutOne(sink, *blobs[i], opts, records[i]);
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

const std::string& RawOf(const oci::Node& n) {
  return n.is_index() ? n.index->raw_manifest() : n.image->raw_manifest();
}

}  // namespace

Result<std::vector<oci::Node>> Manifests(const oci::Node& node) {
  std::vector<oci::Node> out;
  Seen seen;
  IMGTOOL_TRY(Collect(node, out, seen));
  std::reverse(out.begin(), out.end());
  return out;
}

Status Write(const oci::Node& node, oci::Sink& sink, const std::optional<std::string>& tag, const WriteOptions& opts,
             WriteReport& report) {
  std::vector<oci::Node> manifests;
  Seen seen;
  IMGTOOL_TRY(Collect(node, manifests, seen));
  std::vector<BlobRecord> records;
  IMGTOOL_TRY(PutBlobs(sink, BlobsOf(manifests), opts, records));
  for (size_t i = 0; i < manifests.size(); ++i) {
    const oci::Node& m = manifests[i];
    bool top = i + 1 == manifests.size();
    Status st = sink.PutManifest(m.descriptor, RawOf(m), top ? tag : std::nullopt);
    if (!st.ok()) return st.error().Context(sink.name());
    report.manifests.push_back(m.descriptor.digest);
  }
  report.blobs.insert(report.blobs.end(), records.begin(), records.end());
  for (const auto& r : records) report.bytes_sent += r.bytes_sent;
  if (report.digest.empty()) {
    report.digest = node.descriptor.digest;
    report.media_type = node.descriptor.media_type;
  }
  return Status::Ok();
}

}  // namespace imgtool::transport
