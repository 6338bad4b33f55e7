// Compare: digests and one fingerprint per distinct digest -> the verdict. The rules are
// listed in compare.h; the report (report.cc), the wire form (wire.cc) and --expect
// parsing (expect.cc) live beside it. Not here: any I/O or clock.
#include "fleet/compare.h"

#include <algorithm>
#include <array>
#include <set>
#include <string_view>
#include <utility>

namespace imgtool::fleet {

namespace {

// Ranks of one digest and that digest's fingerprint.
struct DigestGroup {
  std::string digest;
  const Fingerprint* fp = nullptr;
  std::vector<int> ranks;  // ascending
};

// Largest group first; ties: smallest first rank first.
template <typename G>
void SortGroups(std::vector<G>& groups) {
  std::sort(groups.begin(), groups.end(), [](const G& a, const G& b) {
    if (a.ranks.size() != b.ranks.size()) return a.ranks.size() > b.ranks.size();
    return a.ranks.front() < b.ranks.front();
  });
}

// Where a field sorts in the report: the order of fingerprint.h's list, so the image and
// the CUDA stack come before GPU details and environment variables.
std::pair<int, std::string_view> FieldOrder(std::string_view field) {
  static constexpr std::array<std::string_view, 18> kExact = {"fingerprint",
                                                              "image.digest",
                                                              "image.index",
                                                              "image.stack_json",
                                                              "os.release",
                                                              "os.kernel",
                                                              "os.glibc",
                                                              "driver.version",
                                                              "cuda.driver_api",
                                                              "cuda.runtime",
                                                              "cublas",
                                                              "cudnn",
                                                              "nccl",
                                                              "gpu.count",
                                                              "gpu.model",
                                                              "gpu.sm_count",
                                                              "gpu.memory_mib",
                                                              "gpu.compute_capability"};
  for (size_t i = 0; i < kExact.size(); ++i) {
    if (field == kExact[i]) return {static_cast<int>(i), ""};
  }
  // Then families, each sorted by name; golden_run last: it is the consequence.
  int base = static_cast<int>(kExact.size());
  if (field.starts_with("gpu.")) return {base, field};
  if (field.starts_with("lib.")) return {base + 1, field};
  if (field.starts_with("env.")) return {base + 2, field};
  if (field.starts_with("golden_run.")) return {base + 4, field};
  return {base + 3, field};
}

std::string PlatformOf(const Fingerprint& fp) {
  auto it = fp.fields.find(kPlatformField);
  return it == fp.fields.end() ? std::string(kAbsent) : it->second;
}

// The values of `field` across the digest groups (those of `platform` only, unless it is
// empty), groups of equal value merged.
std::vector<ValueGroup> ValuesOf(const std::string& field, const std::vector<DigestGroup>& groups,
                                 const std::string& platform = "") {
  std::map<std::string, std::vector<int>> by_value;
  for (const auto& g : groups) {
    if (!platform.empty() && PlatformOf(*g.fp) != platform) continue;
    auto it = g.fp->fields.find(field);
    auto& ranks = by_value[it == g.fp->fields.end() ? std::string(kAbsent) : it->second];
    ranks.insert(ranks.end(), g.ranks.begin(), g.ranks.end());
  }
  std::vector<ValueGroup> out;
  for (auto& [value, ranks] : by_value) {
    std::sort(ranks.begin(), ranks.end());
    out.push_back({value, std::move(ranks)});
  }
  SortGroups(out);
  return out;
}

bool IsVersionField(std::string_view field) {
  return field == "cuda.runtime" || field == "cublas" || field == "cudnn" || field == "nccl" ||
         field == "driver.version" || field == "cuda.driver_api";
}

// "13.0" is a dotted prefix of "13.0.96"; "13.0" is not one of "13.01".
bool DottedPrefix(std::string_view prefix, std::string_view s) {
  return !prefix.empty() && s.size() > prefix.size() && s.substr(0, prefix.size()) == prefix && s[prefix.size()] == '.';
}

// Arrived ranks by platform ("(absent)" for fingerprints without the field).
std::map<std::string, std::vector<int>> RanksByPlatform(const std::vector<DigestGroup>& groups) {
  std::map<std::string, std::vector<int>> out;
  for (const auto& g : groups) {
    auto& ranks = out[PlatformOf(*g.fp)];
    ranks.insert(ranks.end(), g.ranks.begin(), g.ranks.end());
  }
  for (auto& [platform, ranks] : out) std::sort(ranks.begin(), ranks.end());
  return out;
}

void NotePlatforms(const std::map<std::string, std::vector<int>>& platforms,
                   std::map<std::string, std::string>& notes) {
  std::string list;
  for (const auto& [platform, ranks] : platforms) {
    list += (list.empty() ? "" : ", ") + platform + ": " + std::to_string(ranks.size()) +
            (ranks.size() == 1 ? " worker" : " workers");
  }
  notes["platforms"] = list;
  notes["compared per platform"] = "image.digest, image.stack_json, lib.*";
}

// Sets d.expected when --expect names the field; true when a value group is off it.
bool CheckExpected(const CompareInput& input, FieldDiff& d) {
  auto e = input.expected.find(d.field);
  if (e == input.expected.end()) return false;
  d.expected = e->second;
  bool off = false;
  for (const auto& vg : d.groups) {
    // The probe hashes the libraries it loads; stack.json lists a package's every file.
    if (vg.value == kAbsent && d.field.starts_with("lib.")) continue;
    if (!ExpectedValueMatches(d.field, e->second, vg.value)) off = true;
  }
  return off;
}

}  // namespace

FieldScope ScopeOf(const std::string& field) {
  // Properties of the binaries, which differ by architecture by nature.
  if (field == "image.digest" || field == "image.stack_json" || field.starts_with("lib.")) return FieldScope::kPlatform;
  return FieldScope::kFleet;
}

bool ExpectedValueMatches(const std::string& field, const std::string& expected, const std::string& value) {
  if (expected == value) return true;
  return IsVersionField(field) && (DottedPrefix(expected, value) || DottedPrefix(value, expected));
}

int Verdict::ExitCode() const {
  if (!missing.empty()) return 3;
  if (!diffs.empty() || !suspects.empty()) return 1;
  return perf.Fails() ? kPerfExitCode : 0;
}

Result<Verdict> Compare(const CompareInput& input) {
  Verdict v;
  v.expected_workers = static_cast<int>(input.workers.size());
  v.workers = input.workers;
  std::set<int> known;
  for (const auto& w : input.workers) {
    if (!known.insert(w.rank).second) {
      return MakeError(ErrorKind::kInternal, "compare: rank " + std::to_string(w.rank) + " is listed twice");
    }
  }

  std::map<std::string, DigestGroup> by_digest;
  for (const auto& [rank, digest] : input.digests) {
    if (!known.count(rank)) {
      return MakeError(ErrorKind::kInternal,
                       "compare: rank " + std::to_string(rank) + " sent a fingerprint but is not a worker");
    }
    auto full = input.full.find(digest);
    if (full == input.full.end()) {
      return MakeError(ErrorKind::kInternal,
                       "compare: no fingerprint for " + digest + " (of rank " + std::to_string(rank) + ")");
    }
    auto& g = by_digest[digest];
    g.digest = digest;
    g.fp = &full->second;
    g.ranks.push_back(rank);  // input.digests is ordered by rank: ranks stay ascending
  }
  for (const auto& w : input.workers) {
    if (!input.digests.count(w.rank)) v.missing.push_back(w.rank);
  }
  std::sort(v.missing.begin(), v.missing.end());

  std::vector<DigestGroup> groups;
  for (auto& [digest, g] : by_digest) groups.push_back(std::move(g));
  SortGroups(groups);
  if (groups.size() == 1) v.notes["fingerprint"] = groups.front().digest;

  // The fields worth looking at: all of them when digests differ, else only --expect's.
  std::set<std::string> names;
  if (groups.size() > 1) {
    for (const auto& g : groups) {
      for (const auto& [field, value] : g.fp->fields) {
        // The platform groups the comparison; a fleet may mix them.
        if (field != kPlatformField && !FieldIgnored(field, input.ignore)) names.insert(field);
      }
    }
  }
  if (!groups.empty()) {
    for (const auto& [field, value] : input.expected) {
      if (!FieldIgnored(field, input.ignore)) names.insert(field);
    }
  }
  std::vector<std::string> ordered(names.begin(), names.end());
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const std::string& a, const std::string& b) { return FieldOrder(a) < FieldOrder(b); });

  std::map<std::string, std::vector<int>> platforms = RanksByPlatform(groups);
  if (platforms.size() > 1) NotePlatforms(platforms, v.notes);
  bool fields_differ = false;
  for (const auto& field : ordered) {
    std::vector<std::string> scopes = {""};  // one comparison across the fleet
    if (platforms.size() > 1 && ScopeOf(field) == FieldScope::kPlatform) {
      scopes.clear();
      for (const auto& [platform, ranks] : platforms) scopes.push_back(platform);
    }
    for (const auto& platform : scopes) {
      FieldDiff d{field, platform, ValuesOf(field, groups, platform), std::nullopt};
      bool differs = d.groups.size() > 1;
      bool off_expect = CheckExpected(input, d);
      fields_differ = fields_differ || differs;
      if (differs || off_expect) v.diffs.push_back(std::move(d));
    }
  }
  // Digests differ within a platform but no compared field does (different --ignore
  // lists): fail closed.
  if (groups.size() > platforms.size() && !fields_differ) {
    FieldDiff d{"fingerprint", "", {}, std::nullopt};
    for (const auto& g : groups) d.groups.push_back({g.digest, g.ranks});
    v.diffs.insert(v.diffs.begin(), std::move(d));
    v.notes["hint"] = "the digests differ but no compared field does: do all workers run with the same --ignore?";
  }

  for (const auto& d : v.diffs) {
    if (d.field != "golden_run.weights" || d.groups.size() < 2) continue;
    bool majority = d.groups[0].ranks.size() > d.groups[1].ranks.size();
    for (size_t i = majority ? 1 : 0; i < d.groups.size(); ++i) {
      v.suspects.insert(v.suspects.end(), d.groups[i].ranks.begin(), d.groups[i].ranks.end());
    }
    std::sort(v.suspects.begin(), v.suspects.end());
  }
  return v;
}

}  // namespace imgtool::fleet
