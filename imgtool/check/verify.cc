#include "check/verify.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <utility>
#include <vector>

#include "archive/layer.h"
#include "check/stored_blob.h"
#include "fs/cpus.h"
#include "oci/counting_store.h"
#include "oci/image_config.h"
#include "oci/list_limit.h"
#include "oci/manifest.h"
#include "oci/media_types.h"

namespace imgtool::check {

namespace {

constexpr size_t kMaxThreads = 8;  // beyond this the disk or network, not the CPU, is the limit
constexpr int kMaxReadRounds = 4;  // a blob's reads for one manifest: raw, inflated, longer

// A config's facts once its bytes checked out: whether it is an image config, its
// diff_ids, or why it has none (parsed only when named by an image config media type).
struct ConfigFacts {
  bool parsed = false;
  bool image_config = false;
  std::vector<oci::Digest> diff_ids;
  std::string problem;
};

struct Walk {
  const oci::BlobStore& store;
  const VerifyOptions& options;
  VerifyReport& report;
  // Each digest's bytes as read, whatever number of descriptors name it.
  std::map<oci::Digest, StoredBlob> stored;
  std::map<oci::Digest, ConfigFacts> configs;
  // Manifests walked (by digest and the media type they were named as, which decides how
  // they are read): the problems found in what they name, for the next descriptor.
  std::map<std::pair<oci::Digest, std::string>, size_t> walked;
};

std::string ErrorText(const Error& e) { return e.kind == ErrorKind::kNotFound ? "missing" : e.message; }

void AddProblems(VerifyReport& report, const oci::Digest& d, const std::vector<std::string>& problems) {
  for (const auto& p : problems) report.problems.push_back({d.str(), p});
}

// Passes at most `limit` bytes through and says why a read stopped: the source went on
// past them, or the source itself failed. A layer read on a pipeline reads ahead of its
// inflater, so a read may fail after a decoding error it never sees: Caused says whether
// the error a digest returned is the one this reader gave.
class CappedReader : public oci::Reader {
 public:
  CappedReader(std::unique_ptr<oci::Reader> inner, uint64_t limit) : inner_(std::move(inner)), left_(limit) {}
  Result<size_t> Read(void* buf, size_t n) override {
    auto got = inner_->Read(buf, static_cast<size_t>(std::min<uint64_t>(n, left_ + 1)));
    if (!got.ok()) {
      failure_ = got.error();
      return got;
    }
    if (*got > left_) {
      longer = true;
      failure_ = MakeError(ErrorKind::kIntegrity, "more bytes than the descriptor names");
      return *failure_;
    }
    left_ -= *got;
    return got;
  }
  bool Caused(const Error& e) const { return failure_ && failure_->kind == e.kind && failure_->message == e.message; }
  bool longer = false;

 private:
  std::unique_ptr<oci::Reader> inner_;
  uint64_t left_;
  std::optional<Error> failure_;
};

// One read of a blob: its size and sha256 as far as `plan.limit`, and its diff_id when
// asked (from this user's record of these bytes when there is one, else inflated).
StoredBlob ReadStored(const oci::BlobStore& store, const oci::Descriptor& d, const ReadPlan& plan,
                      const VerifyOptions& options, archive::CoreBudget& cores, VerifyReport& counts) {
  StoredBlob out;
  auto raw = store.OpenBlob(d);
  if (!raw.ok()) {
    out.error = ErrorText(raw.error());
    out.error_claim = d.size;
    return out;
  }
  auto known = plan.inflate && !options.decompress_all ? options.known.Find(d.digest) : std::nullopt;
  bool inflate = plan.inflate && !known;
  CappedReader capped(std::move(*raw), plan.limit);
  auto digests = archive::DigestLayer(capped, d.digest.str(), inflate, &cores);
  if (!digests.ok()) {
    const bool from_source = capped.Caused(digests.error());
    if (from_source && capped.longer) {
      out.longer_than = plan.limit;
    } else if (inflate && !from_source) {
      out.inflate_error = digests.error().message;
    } else {
      out.error = ErrorText(digests.error());
      out.error_claim = d.size;
    }
    return out;
  }
  out.complete = true;
  out.size = digests->size;
  out.sha256 = digests->digest;
  counts.blobs_checked++;
  counts.bytes_checked += digests->size;
  if (known) {
    out.diff_id = known->diff_id;
    out.diff_id_recorded = true;
    if (digests->digest == d.digest) counts.diff_ids_known++;
  } else if (inflate) {
    out.diff_id = digests->diff_id;
    counts.layers_decompressed++;
    if (digests->digest == d.digest && digests->diff_id != digests->digest) {
      options.known.Record(digests->digest, {digests->diff_id, digests->uncompressed_size});
    }
  }
  return out;
}

// The reads `claims` still need, one per digest (the farthest limit, inflating if any
// wants it), biggest first so that the threads finish together.
std::vector<std::pair<oci::Descriptor, ReadPlan>> PlanReads(const Walk& w, const std::vector<Claim>& claims) {
  std::map<oci::Digest, std::pair<oci::Descriptor, ReadPlan>> plans;
  for (const auto& c : claims) {
    auto it = w.stored.find(c.descriptor->digest);
    auto plan = PlanRead(it == w.stored.end() ? nullptr : &it->second, c);
    if (!plan) continue;
    auto [at, fresh] = plans.try_emplace(c.descriptor->digest, *c.descriptor, *plan);
    if (fresh) continue;
    at->second.second.limit = std::max(at->second.second.limit, plan->limit);
    at->second.second.inflate = at->second.second.inflate || plan->inflate;
  }
  std::vector<std::pair<oci::Descriptor, ReadPlan>> out;
  for (auto& [digest, plan] : plans) out.push_back(std::move(plan));
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second.limit > b.second.limit; });
  return out;
}

// The planned reads on a thread per core (each reads, hashes and inflates its own). The
// cores no thread holds, at the start or once a thread runs out of blobs, let a big layer
// still being read go on as a pipeline (archive/core_budget.h): one big layer and a few
// small ones use every core, many layers use no more threads than cores.
void RunReads(Walk& w, const std::vector<std::pair<oci::Descriptor, ReadPlan>>& plans) {
  const size_t n = plans.size();
  std::vector<StoredBlob> results(n);
  std::vector<VerifyReport> counts(n);
  std::atomic<size_t> next{0};
  const int usable = w.options.cpus > 0 ? w.options.cpus : fs::UsableCpus();
  const size_t cpus = std::clamp<size_t>(static_cast<size_t>(usable), 1, kMaxThreads);
  const size_t threads = std::min(n, cpus);
  archive::CoreBudget cores(static_cast<int>(cpus - threads));
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) {
      results[i] = ReadStored(w.store, plans[i].first, plans[i].second, w.options, cores, counts[i]);
    }
    cores.Give();
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (size_t i = 0; i < n; ++i) {
    Merge(w.stored[plans[i].first.digest], results[i]);
    w.report.blobs_checked += counts[i].blobs_checked;
    w.report.bytes_checked += counts[i].bytes_checked;
    w.report.layers_decompressed += counts[i].layers_decompressed;
    w.report.diff_ids_known += counts[i].diff_ids_known;
  }
}

// A manifest's layers (or an artifact's blobs): each digest read once for the whole
// verify, then every descriptor judged in manifest order against what was read.
void CheckBlobs(Walk& w, const std::vector<oci::Descriptor>& blobs, const std::vector<oci::Digest>& diff_ids) {
  std::vector<Claim> claims;
  for (size_t i = 0; i < blobs.size(); ++i) {
    bool tar = i < diff_ids.size() && oci::IsLayerMediaType(blobs[i].media_type);
    claims.push_back({&blobs[i], tar ? &diff_ids[i] : nullptr});
  }
  auto plans = PlanReads(w, claims);
  w.report.verdicts_reused += static_cast<int>(claims.size() - plans.size());
  for (int round = 0; round < kMaxReadRounds && !plans.empty(); ++round) {
    RunReads(w, plans);
    plans = PlanReads(w, claims);
  }
  for (const auto& c : claims) AddProblems(w.report, c.descriptor->digest, Judge(w.stored[c.descriptor->digest], c));
}

// A small blob (manifest, config), read whole and checked once per digest; nullopt (and a
// problem) when damaged, and when its bytes were already judged and are not wanted again.
std::optional<std::string> SmallBlob(Walk& w, const oci::Descriptor& d, bool manifest) {
  auto raw = manifest ? w.store.ReadManifest(d) : oci::ReadBlob(w.store, d, oci::kMaxConfigBytes);
  StoredBlob read;
  if (!raw.ok()) {
    read.error = ErrorText(raw.error());
    read.error_claim = d.size;
  } else {
    read.complete = true;
    read.size = raw->size();
    read.sha256 = oci::Digest::Of(*raw);
  }
  StoredBlob& known = w.stored[d.digest];
  if (read.complete && !known.complete) {  // read again for another use: counted once
    w.report.blobs_checked++;
    w.report.bytes_checked += read.size;
  }
  Merge(known, read);
  auto problems = Judge(w.stored[d.digest], {&d, nullptr});
  AddProblems(w.report, d.digest, problems);
  if (!raw.ok() || !problems.empty()) return std::nullopt;
  return std::move(*raw);
}

// What was already read about a small blob answers `d` with a problem: no need to read it.
bool KnownBad(Walk& w, const oci::Descriptor& d) {
  auto it = w.stored.find(d.digest);
  if (it == w.stored.end() || PlanRead(&it->second, {&d, nullptr})) return false;
  auto problems = Judge(it->second, {&d, nullptr});
  AddProblems(w.report, d.digest, problems);
  if (!problems.empty()) w.report.verdicts_reused++;
  return !problems.empty();
}

// Read as opening an image reads it (oci::ReadConfig): `{}` under an image config media
// type is not an image config, and its manifest is checked as an artifact's.
ConfigFacts Parsed(const std::string& media_type, const std::string& raw) {
  auto reading = oci::ReadConfig(media_type, raw, "config");
  if (!reading.ok()) return {true, true, {}, reading.error().message};
  return {true, reading->image_config, std::move(reading->diff_ids), ""};
}

// The config of an image: its diff_ids; an artifact's config is only checked as a blob.
std::vector<oci::Digest> CheckConfig(Walk& w, const oci::Manifest& m, bool& have_diff_ids) {
  have_diff_ids = false;
  const oci::Descriptor& d = m.config;
  const bool named_image_config = oci::IsConfigMediaType(d.media_type) && m.artifact_type.empty();
  if (KnownBad(w, d)) return {};
  auto facts = w.configs.find(d.digest);
  if (facts != w.configs.end() && (facts->second.parsed || !named_image_config)) {
    w.report.verdicts_reused++;
  } else {
    auto raw = SmallBlob(w, d, false);
    if (!raw) return {};
    facts = w.configs.insert_or_assign(d.digest, named_image_config ? Parsed(d.media_type, *raw) : ConfigFacts{}).first;
  }
  if (!named_image_config || !facts->second.image_config) return {};
  if (!facts->second.problem.empty()) {
    w.report.problems.push_back({d.digest.str(), facts->second.problem});
    return {};
  }
  const auto& ids = facts->second.diff_ids;
  if (ids.size() != m.layers.size()) {
    w.report.problems.push_back(
        {d.digest.str(), std::to_string(ids.size()) + " diff_ids for " + std::to_string(m.layers.size()) + " layers"});
    return {};
  }
  have_diff_ids = true;
  return ids;
}

Status CheckManifest(Walk& w, const oci::Descriptor& d, int depth, const std::string& named_by);

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
      return MakeError(ErrorKind::kNotFound,
                       "index " + d.digest.Short() + ": no image for " + oci::PlatformString(*w.options.platform));
    }
    children = {*it};
  }
  IMGTOOL_TRY(oci::CheckListLength(oci::DistinctDigests(children), "index " + d.digest.Short(), "distinct manifests"));
  for (size_t i = 0; i < children.size(); ++i) {
    IMGTOOL_TRY(CheckManifest(w, children[i], depth + 1,
                              "index " + d.digest.Short() + " manifests[" + std::to_string(i) + "]"));
  }
  return Status::Ok();
}

// Reads and checks one manifest and everything it names (the first descriptor to name it).
Status WalkManifest(Walk& w, const oci::Descriptor& d, int depth) {
  w.report.manifests.push_back(d.digest);
  auto raw = SmallBlob(w, d, true);
  if (!raw) return Status::Ok();
  auto media_type = oci::ManifestMediaType(d, *raw, w.store.name() + ": manifest " + d.digest.Short());
  if (!media_type.ok()) return media_type.error();
  if (depth == 0) w.report.media_type = *media_type;  // what the reference was read as
  if (oci::IsIndexMediaType(*media_type)) {
    IMGTOOL_TRY(oci::CheckIndexDepth(d.digest, depth + 1));  // depth counts manifests from 0, levels from 1
    return CheckIndex(w, d, *raw, depth);
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

// A manifest is walked once per media type it is named as; another descriptor naming it
// is judged by its own size and the problems found the first time, and named when those
// make it damaged.
Status CheckManifest(Walk& w, const oci::Descriptor& d, int depth, const std::string& named_by) {
  auto key = std::make_pair(d.digest, d.media_type);
  if (auto seen = w.walked.find(key); seen != w.walked.end()) {
    if (KnownBad(w, d)) return Status::Ok();
    w.report.verdicts_reused++;
    if (seen->second > 0) {
      w.report.problems.push_back({d.digest.str(), named_by + " names it again: damaged, " +
                                                       std::to_string(seen->second) + " problems named above"});
    }
    return Status::Ok();
  }
  if (KnownBad(w, d)) return Status::Ok();
  size_t before = w.report.problems.size();
  IMGTOOL_TRY(WalkManifest(w, d, depth));
  w.walked[key] = w.report.problems.size() - before;
  return Status::Ok();
}

}  // namespace

Result<VerifyReport> Verify(const oci::BlobStore& store, const oci::Descriptor& top, const VerifyOptions& options) {
  VerifyReport report;
  report.manifest = top.digest;
  report.media_type = top.media_type;
  oci::CountingStore counted(store);
  Walk w{counted, options, report, {}, {}, {}};
  IMGTOOL_TRY(CheckManifest(w, top, 0, "the reference"));
  auto counts = counted.counts();
  report.reads = counts.reads;
  report.bytes_read = counts.bytes;
  return report;
}

}  // namespace imgtool::check
