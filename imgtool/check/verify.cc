#include "check/verify.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "archive/layer.h"
#include "layout/layout_reader.h"
#include "oci/image_config.h"
#include "oci/manifest.h"
#include "oci/media_types.h"

namespace imgtool::check {

namespace {

constexpr size_t kMaxThreads = 8;  // beyond this the disk, not the CPU, is the limit

// Reads a small blob; a problem is recorded and nullopt returned when it is damaged.
std::optional<std::string> CheckSmallBlob(const std::string& dir, const oci::Descriptor& d, VerifyReport& report) {
  auto raw = layout::ReadVerifiedBlob(dir, d);
  if (!raw.ok()) {
    report.problems.push_back({d.digest.str(), raw.error().message});
    return std::nullopt;
  }
  report.blobs_checked++;
  report.bytes_checked += raw->size();
  return *raw;
}

void CheckDiffId(const std::string& name, const oci::Digest& actual, const oci::Digest* diff_id, VerifyReport& report) {
  if (diff_id && actual != *diff_id) {
    report.problems.push_back({name, "uncompressed content hashes to " + actual.str() + ", config diff_id is " +
                                         diff_id->str()});
  }
}

void CheckLayer(const std::string& dir, const oci::Descriptor& d, const oci::Digest* diff_id,
                const VerifyOptions& options, VerifyReport& report) {
  const std::string name = d.digest.str();
  if (!oci::IsLayerMediaType(d.media_type)) report.problems.push_back({name, "unknown layer media type " + d.media_type});
  std::string path = layout::BlobPathIn(dir, d.digest);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    report.problems.push_back({name, "missing"});
    return;
  }
  if (st.st_size != d.size) {
    report.problems.push_back({name, "size " + std::to_string(st.st_size) + ", manifest says " + std::to_string(d.size)});
  }
  // A known diff_id spares the inflate only when the blob re-hashes to the digest it was
  // recorded for; any other outcome falls through to the full pass, which names the damage.
  if (auto k = options.decompress_all ? std::nullopt : options.known.Find(d.digest)) {
    auto hashed = archive::HashBlob(path);
    if (hashed.ok() && *hashed == d.digest) {
      report.blobs_checked++;
      report.bytes_checked += static_cast<uint64_t>(d.size);
      report.diff_ids_known++;
      CheckDiffId(name, k->diff_id, diff_id, report);
      return;
    }
  }
  auto digests = archive::DigestLayerBlob(path);
  if (!digests.ok()) {
    report.problems.push_back({name, digests.error().message});
    return;
  }
  report.blobs_checked++;
  report.bytes_checked += digests->size;
  report.layers_decompressed++;
  if (digests->diff_id != digests->digest) {  // compressed, and every stream check passed
    options.known.Record(digests->digest, {digests->diff_id, digests->uncompressed_size});
  }
  if (digests->digest != d.digest) report.problems.push_back({name, "content hashes to " + digests->digest.str()});
  CheckDiffId(name, digests->diff_id, diff_id, report);
}

}  // namespace

Result<VerifyReport> VerifyLayoutImage(const std::string& dir, const std::string& tag, const VerifyOptions& options) {
  auto desc = layout::ResolveManifest(dir, tag);
  if (!desc.ok()) return desc.error();
  VerifyReport report;
  report.manifest = desc->digest;
  if (!oci::IsManifestMediaType(desc->media_type)) {
    report.problems.push_back({"index.json", "manifest media type " + desc->media_type + " is not an image manifest"});
  }
  auto raw_manifest = CheckSmallBlob(dir, *desc, report);
  if (!raw_manifest) return report;
  auto manifest = oci::ParseManifest(*raw_manifest, "manifest");
  if (!manifest.ok()) {
    report.problems.push_back({desc->digest.str(), manifest.error().message});
    return report;
  }
  std::vector<oci::Digest> diff_ids;
  bool have_diff_ids = false;
  if (!oci::IsConfigMediaType(manifest->config.media_type)) {
    report.problems.push_back({manifest->config.digest.str(), "config media type " + manifest->config.media_type});
  }
  if (auto raw_config = CheckSmallBlob(dir, manifest->config, report)) {
    auto config = oci::ParseImageConfig(*raw_config, "config");
    if (!config.ok()) {
      report.problems.push_back({manifest->config.digest.str(), config.error().message});
    } else {
      diff_ids = *oci::ConfigDiffIds(*config);
      have_diff_ids = true;
      if (diff_ids.size() != manifest->layers.size()) {
        report.problems.push_back({manifest->config.digest.str(),
                                   std::to_string(diff_ids.size()) + " diff_ids for " +
                                       std::to_string(manifest->layers.size()) + " layers"});
        have_diff_ids = false;
      }
    }
  }
  // Layers are checked on several threads (each reads, hashes and inflates its own blob,
  // so the work is independent), biggest first so the threads finish together; the
  // problems are reported in layer order whatever finished first.
  const size_t n = manifest->layers.size();
  std::vector<VerifyReport> parts(n);
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return manifest->layers[a].size > manifest->layers[b].size; });
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t k = next++; k < n; k = next++) {
      size_t i = order[k];
      CheckLayer(dir, manifest->layers[i], have_diff_ids ? &diff_ids[i] : nullptr, options, parts[i]);
    }
  };
  size_t threads = std::min<size_t>(n, std::clamp<size_t>(std::thread::hardware_concurrency(), 1, kMaxThreads));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (const auto& part : parts) {
    report.blobs_checked += part.blobs_checked;
    report.bytes_checked += part.bytes_checked;
    report.layers_decompressed += part.layers_decompressed;
    report.diff_ids_known += part.diff_ids_known;
    report.problems.insert(report.problems.end(), part.problems.begin(), part.problems.end());
  }
  return report;
}

}  // namespace imgtool::check
