#include "check/verify.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "archive/layer.h"
#include "oci/image_config.h"
#include "oci/manifest.h"
#include "oci/media_types.h"

namespace imgtool::check {

namespace {

constexpr size_t kMaxThreads = 8;  // beyond this the disk or network, not the CPU, is the limit

struct Walk {
  const oci::BlobStore& store;
  const VerifyOptions& options;
  VerifyReport& report;
};

// A small blob (manifest, config), read whole and checked; nullopt (and a problem) when damaged.
std::optional<std::string> SmallBlob(Walk& w, const oci::Descriptor& d, bool manifest) {
  auto raw = manifest ? w.store.ReadManifest(d) : oci::ReadBlob(w.store, d, oci::kMaxConfigBytes);
  if (!raw.ok()) {
    w.report.problems.push_back({d.digest.str(), raw.error().kind == ErrorKind::kNotFound ? "missing"
                                                                                           : raw.error().message});
    return std::nullopt;
  }
  if (static_cast<int64_t>(raw->size()) != d.size || oci::Digest::Of(*raw) != d.digest) {
    w.report.problems.push_back({d.digest.str(), "content hashes to " + oci::Digest::Of(*raw).str()});
    return std::nullopt;
  }
  w.report.blobs_checked++;
  w.report.bytes_checked += raw->size();
  return std::move(*raw);
}

// Streams one layer or artifact blob: its sha256 and size always, its diff_id when it
// is a tar layer whose diff_id is not already known for exactly these bytes.
void CheckBlob(const oci::BlobStore& store, const oci::Descriptor& d, const oci::Digest* diff_id,
               const VerifyOptions& options, VerifyReport& report) {
  const std::string name = d.digest.str();
  auto raw = store.OpenBlob(d);
  if (!raw.ok()) {
    report.problems.push_back({name, raw.error().kind == ErrorKind::kNotFound ? "missing" : raw.error().message});
    return;
  }
  oci::LimitReader limited(std::move(*raw), static_cast<uint64_t>(std::max<int64_t>(d.size, 0)), name);
  auto known = diff_id && !options.decompress_all ? options.known.Find(d.digest) : std::nullopt;
  bool inflate = diff_id && !known;
  auto digests = archive::DigestLayer(limited, name, inflate);
  if (!digests.ok()) {
    report.problems.push_back({name, digests.error().kind == ErrorKind::kNotFound ? "missing" : digests.error().message});
    return;
  }
  if (digests->size != static_cast<uint64_t>(d.size)) {
    report.problems.push_back({name, "size " + std::to_string(digests->size) + ", manifest says " + std::to_string(d.size)});
  } else if (digests->digest != d.digest) {
    report.problems.push_back({name, "content hashes to " + digests->digest.str()});
  }
  report.blobs_checked++;
  report.bytes_checked += digests->size;
  // A known diff_id belongs to the bytes it was recorded for, and these are not them.
  if (!diff_id || (known && digests->digest != d.digest)) return;
  oci::Digest derived = known ? known->diff_id : digests->diff_id;
  if (known) {
    report.diff_ids_known++;
  } else {
    report.layers_decompressed++;
    if (digests->digest == d.digest && digests->diff_id != digests->digest) {
      options.known.Record(digests->digest, {digests->diff_id, digests->uncompressed_size});
    }
  }
  if (derived != *diff_id) {
    report.problems.push_back({name, "uncompressed content hashes to " + derived.str() + ", config diff_id is " +
                                         diff_id->str()});
  }
}

// Blobs on several threads (each reads, hashes and inflates its own), biggest first so
// the threads finish together; problems in manifest order whatever finished first.
void CheckBlobs(Walk& w, const std::vector<oci::Descriptor>& blobs, const std::vector<oci::Digest>& diff_ids) {
  const size_t n = blobs.size();
  std::vector<VerifyReport> parts(n);
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return blobs[a].size > blobs[b].size; });
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t k = next++; k < n; k = next++) {
      size_t i = order[k];
      bool tar = i < diff_ids.size() && oci::IsLayerMediaType(blobs[i].media_type);
      CheckBlob(w.store, blobs[i], tar ? &diff_ids[i] : nullptr, w.options, parts[i]);
    }
  };
  size_t threads = std::min<size_t>(n, std::clamp<size_t>(std::thread::hardware_concurrency(), 1, kMaxThreads));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (const auto& part : parts) {
    w.report.blobs_checked += part.blobs_checked;
    w.report.bytes_checked += part.bytes_checked;
    w.report.layers_decompressed += part.layers_decompressed;
    w.report.diff_ids_known += part.diff_ids_known;
    w.report.problems.insert(w.report.problems.end(), part.problems.begin(), part.problems.end());
  }
}

// The config of an image: its diff_ids; an artifact's config is only checked as a blob.
std::vector<oci::Digest> CheckConfig(Walk& w, const oci::Manifest& m, bool& have_diff_ids) {
  have_diff_ids = false;
  auto raw = SmallBlob(w, m.config, false);
  if (!raw || !oci::IsConfigMediaType(m.config.media_type) || !m.artifact_type.empty()) return {};
  auto config = oci::ParseImageConfig(*raw, "config");
  if (!config.ok()) {
    w.report.problems.push_back({m.config.digest.str(), config.error().message});
    return {};
  }
  auto ids = *oci::ConfigDiffIds(*config);
  if (ids.size() != m.layers.size()) {
    w.report.problems.push_back({m.config.digest.str(), std::to_string(ids.size()) + " diff_ids for " +
                                                            std::to_string(m.layers.size()) + " layers"});
    return {};
  }
  have_diff_ids = true;
  return ids;
}

Status CheckManifest(Walk& w, const oci::Descriptor& d, int depth);

Status CheckIndex(Walk& w, const oci::Descriptor& d, const std::string& raw, int depth) {
  auto index = oci::ParseIndex(raw, "index " + d.digest.Short());
  if (!index.ok()) {
    w.report.problems.push_back({d.digest.str(), index.error().message});
    return Status::Ok();
  }
  std::vector<oci::Descriptor> children = index->manifests;
  if (w.options.platform) {
    auto it = std::find_if(children.begin(), children.end(), [&](const oci::Descriptor& c) {
      return c.platform && oci::PlatformMatches(*w.options.platform, *c.platform);
    });
    if (it == children.end()) {
      return MakeError(ErrorKind::kNotFound, "index " + d.digest.Short() + ": no image for " +
                                                 oci::PlatformString(*w.options.platform));
    }
    children = {*it};
  }
  for (const auto& c : children) IMGTOOL_TRY(CheckManifest(w, c, depth + 1));
  return Status::Ok();
}

Status CheckManifest(Walk& w, const oci::Descriptor& d, int depth) {
  w.report.manifests.push_back(d.digest);
  auto raw = SmallBlob(w, d, true);
  if (!raw) return Status::Ok();
  std::string media_type = d.media_type.empty() ? oci::SniffManifestMediaType(*raw) : d.media_type;
  if (oci::IsIndexMediaType(media_type)) {
    IMGTOOL_TRY(oci::CheckIndexDepth(d.digest, depth + 1));  // depth counts manifests from 0, levels from 1
    return CheckIndex(w, d, *raw, depth);
  }
  if (!oci::IsManifestMediaType(media_type)) {
    return MakeError(ErrorKind::kInvalidInput, "manifest " + d.digest.Short() + ": unsupported media type \"" +
                                                   media_type + "\"");
  }
  auto manifest = oci::ParseManifest(*raw, "manifest " + d.digest.Short());
  if (!manifest.ok()) {
    w.report.problems.push_back({d.digest.str(), manifest.error().message});
    return Status::Ok();
  }
  bool have_diff_ids = false;
  auto diff_ids = CheckConfig(w, *manifest, have_diff_ids);
  CheckBlobs(w, manifest->layers, have_diff_ids ? diff_ids : std::vector<oci::Digest>());
  return Status::Ok();
}

}  // namespace

Result<VerifyReport> Verify(const oci::BlobStore& store, const oci::Descriptor& top, const VerifyOptions& options) {
  VerifyReport report;
  report.manifest = top.digest;
  report.media_type = top.media_type;
  Walk w{store, options, report};
  IMGTOOL_TRY(CheckManifest(w, top, 0));
  return report;
}

}  // namespace imgtool::check
