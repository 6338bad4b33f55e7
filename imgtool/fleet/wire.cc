// The verdict on the wire, chief -> every worker. The reader is strict and bounded: the
// text arrives over the network, and a malformed verdict must be an error with a path,
// never a crash, a huge allocation or a wrong report.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "fleet/compare.h"

namespace imgtool::fleet {

namespace {

constexpr int kWireVersion = 1;
constexpr size_t kMaxDiffs = 1 << 16;
constexpr size_t kMaxNotes = 256;
constexpr size_t kMaxNameBytes = 256;                  // worker names and addresses
constexpr size_t kMaxExpandedRanks = size_t{1} << 26;  // all rank lists together

Error Bad(const std::string& path, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, path + ": " + why);
}

// Ascending ranks -> [[first, last], ...].
oci::Json Runs(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  oci::Json out = oci::Json::array();
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i + 1;
    while (j < ranks.size() && ranks[j] == ranks[j - 1] + 1) ++j;
    out.push_back({ranks[i], ranks[j - 1]});
    i = j;
  }
  return out;
}

class Reader {
 public:
  Status Keys(const oci::Json& j, const std::string& path, const std::set<std::string>& allowed,
              const std::set<std::string>& required) {
    if (!j.is_object()) return Bad(path, "not an object");
    for (const auto& [key, value] : j.items()) {
      if (!allowed.count(key)) return Bad(path + "." + key.substr(0, 40), "unknown key");
    }
    for (const auto& key : required) {
      if (!j.contains(key)) return Bad(path + "." + key, "missing");
    }
    return Status::Ok();
  }

  Result<std::string> String(const oci::Json& j, const std::string& path, size_t max_bytes) {
    if (!j.is_string()) return Bad(path, "not a string");
    const auto& s = j.get_ref<const std::string&>();
    if (s.size() > max_bytes) {
      return Bad(path, std::to_string(s.size()) + " bytes, more than the limit of " + std::to_string(max_bytes));
    }
    return s;
  }

  Result<int> Int(const oci::Json& j, const std::string& path, int64_t lo, int64_t hi) {
    if (!j.is_number_integer()) return Bad(path, "not an integer");
    if (j.is_number_unsigned() ? j.get<uint64_t>() > static_cast<uint64_t>(hi)
                               : (j.get<int64_t>() < lo || j.get<int64_t>() > hi)) {
      return Bad(path, "out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return static_cast<int>(j.get<int64_t>());
  }

  // [[a, b], ...], ascending and disjoint, every rank a worker's.
  Result<std::vector<int>> Ranks(const oci::Json& j, const std::string& path, bool non_empty) {
    if (!j.is_array()) return Bad(path, "not an array");
    if (non_empty && j.empty()) return Bad(path, "empty");
    std::vector<int> out;
    int64_t prev = -1;
    for (size_t i = 0; i < j.size(); ++i) {
      std::string at = path + "[" + std::to_string(i) + "]";
      if (!j[i].is_array() || j[i].size() != 2) return Bad(at, "not a [first, last] pair");
      auto a = Int(j[i][0], at + "[0]", 0, kMaxWorkers - 1);
      if (!a.ok()) return a.error();
      auto b = Int(j[i][1], at + "[1]", 0, kMaxWorkers - 1);
      if (!b.ok()) return b.error();
      if (*a > *b) return Bad(at, "first rank " + std::to_string(*a) + " after last " + std::to_string(*b));
      if (*a <= prev) return Bad(at, "ranks out of order or repeated");
      expanded_ += static_cast<size_t>(*b - *a) + 1;
      if (expanded_ > kMaxExpandedRanks) {
        return Bad(at, "more than " + std::to_string(kMaxExpandedRanks) + " ranks in all the lists");
      }
      for (int r = *a; r <= *b; ++r) {
        if (!std::binary_search(ranks_.begin(), ranks_.end(), r)) {
          return Bad(at, "rank " + std::to_string(r) + " is not a worker");
        }
        out.push_back(r);
      }
      prev = *b;
    }
    return out;
  }

  std::vector<int> ranks_;  // the workers' ranks, ascending

 private:
  size_t expanded_ = 0;
};

Result<std::vector<WorkerId>> ReadWorkers(Reader& rd, const oci::Json& j) {
  if (!j.is_array()) return Bad("$.workers", "not an array");
  if (j.size() > static_cast<size_t>(kMaxWorkers)) return Bad("$.workers", "more than " + std::to_string(kMaxWorkers));
  std::vector<WorkerId> out;
  for (size_t i = 0; i < j.size(); ++i) {
    std::string at = "$.workers[" + std::to_string(i) + "]";
    IMGTOOL_TRY(rd.Keys(j[i], at, {"rank", "name", "address"}, {"rank", "name", "address"}));
    WorkerId w;
    auto rank = rd.Int(j[i]["rank"], at + ".rank", 0, kMaxWorkers - 1);
    if (!rank.ok()) return rank.error();
    if (!out.empty() && *rank <= out.back().rank) return Bad(at + ".rank", "ranks out of order or repeated");
    auto name = rd.String(j[i]["name"], at + ".name", kMaxNameBytes);
    if (!name.ok()) return name.error();
    auto address = rd.String(j[i]["address"], at + ".address", kMaxNameBytes);
    if (!address.ok()) return address.error();
    out.push_back({*rank, *name, *address});
  }
  return out;
}

Result<FieldDiff> ReadDiff(Reader& rd, const oci::Json& j, const std::string& at, const std::vector<int>& missing) {
  IMGTOOL_TRY(rd.Keys(j, at, {"field", "platform", "expected", "groups"}, {"field", "groups"}));
  FieldDiff d;
  auto field = rd.String(j["field"], at + ".field", kMaxFieldNameBytes);
  if (!field.ok()) return field.error();
  if (field->empty()) return Bad(at + ".field", "empty");
  d.field = *field;
  if (j.contains("platform")) {
    auto p = rd.String(j["platform"], at + ".platform", kMaxFieldValueBytes);
    if (!p.ok()) return p.error();
    if (p->empty()) return Bad(at + ".platform", "empty");
    d.platform = *p;
  }
  if (j.contains("expected")) {
    auto e = rd.String(j["expected"], at + ".expected", kMaxFieldValueBytes);
    if (!e.ok()) return e.error();
    d.expected = *e;
  }
  const oci::Json& groups = j["groups"];
  if (!groups.is_array() || groups.empty()) return Bad(at + ".groups", "not a non-empty array");
  std::set<int> seen;
  for (size_t g = 0; g < groups.size(); ++g) {
    std::string gat = at + ".groups[" + std::to_string(g) + "]";
    IMGTOOL_TRY(rd.Keys(groups[g], gat, {"value", "ranks"}, {"value", "ranks"}));
    auto value = rd.String(groups[g]["value"], gat + ".value", kMaxFieldValueBytes);
    if (!value.ok()) return value.error();
    auto ranks = rd.Ranks(groups[g]["ranks"], gat + ".ranks", true);
    if (!ranks.ok()) return ranks.error();
    for (int r : *ranks) {
      if (!seen.insert(r).second) return Bad(gat + ".ranks", "rank " + std::to_string(r) + " is in two groups");
      if (std::binary_search(missing.begin(), missing.end(), r)) {
        return Bad(gat + ".ranks", "rank " + std::to_string(r) + " is missing yet has a value");
      }
    }
    d.groups.push_back({*value, std::move(*ranks)});
  }
  return d;
}

constexpr size_t kMaxPerfErrorBytes = 1024;
constexpr int64_t kMaxPerfMilli = 1'000'000'000'000'000;

oci::Json PerfFiguresToJson(const PerfFigures& f) {
  if (!f.error.empty()) return {{"error", f.error}};
  return {{"figures", oci::Json(f.milli)}};
}

oci::Json PerfToJson(const PerfVerdict& p) {
  oci::Json rows = oci::Json::array();
  for (const auto& [rank, f] : p.rows) {
    oci::Json row = PerfFiguresToJson(f);
    row["rank"] = rank;
    rows.push_back(row);
  }
  oci::Json flags = oci::Json::array();
  for (const auto& f : p.flags) {
    if (f.figure.empty()) {
      flags.push_back({{"rank", f.rank}, {"error", f.error}});
    } else {
      flags.push_back({{"rank", f.rank}, {"figure", f.figure}, {"value", f.value}, {"median", f.median}});
    }
  }
  return {{"threshold_permille", p.threshold_permille},
          {"warn_only", p.warn_only},
          {"skipped", p.skipped},
          {"medians", oci::Json(p.medians)},
          {"complete", p.complete},
          {"rows", rows},
          {"flags", flags}};
}

Result<int64_t> PerfMilli(const oci::Json& j, const std::string& path) {
  if (!j.is_number_integer()) return Bad(path, "not an integer");
  if (j.is_number_unsigned() ? j.get<uint64_t>() > static_cast<uint64_t>(kMaxPerfMilli)
                             : (j.get<int64_t>() < 0 || j.get<int64_t>() > kMaxPerfMilli)) {
    return Bad(path, "out of range [0, 10^15]");
  }
  return j.get<int64_t>();
}

Result<std::map<std::string, int64_t>> PerfFigureMap(const oci::Json& j, const std::string& path) {
  if (!j.is_object()) return Bad(path, "not an object");
  const auto& names = PerfFigureNames();
  std::map<std::string, int64_t> out;
  for (const auto& [name, value] : j.items()) {
    if (std::find(names.begin(), names.end(), name) == names.end()) return Bad(path, "unknown figure");
    auto v = PerfMilli(value, path + "." + name);
    if (!v.ok()) return v.error();
    out[name] = *v;
  }
  return out;
}

Result<int> PerfRank(Reader& rd, const oci::Json& j, const std::string& path) {
  auto rank = rd.Int(j, path, 0, kMaxWorkers - 1);
  if (!rank.ok()) return rank.error();
  if (!std::binary_search(rd.ranks_.begin(), rd.ranks_.end(), *rank)) {
    return Bad(path, "rank " + std::to_string(*rank) + " is not a worker");
  }
  return rank;
}

Result<PerfFlag> ReadPerfFlag(Reader& rd, const oci::Json& j, const std::string& at) {
  PerfFlag f;
  IMGTOOL_TRY(rd.Keys(j, at, {"rank", "figure", "value", "median", "error"}, {"rank"}));
  auto rank = PerfRank(rd, j["rank"], at + ".rank");
  if (!rank.ok()) return rank.error();
  f.rank = *rank;
  if (j.contains("error")) {
    if (j.size() != 2) return Bad(at, "an error flag has a rank and an error only");
    auto e = rd.String(j["error"], at + ".error", kMaxPerfErrorBytes);
    if (!e.ok()) return e.error();
    if (e->empty()) return Bad(at + ".error", "empty");
    f.error = *e;
    return f;
  }
  IMGTOOL_TRY(rd.Keys(j, at, {"rank", "figure", "value", "median"}, {"rank", "figure", "value", "median"}));
  auto figure = rd.String(j["figure"], at + ".figure", 64);
  if (!figure.ok()) return figure.error();
  const auto& names = PerfFigureNames();
  if (std::find(names.begin(), names.end(), *figure) == names.end()) return Bad(at + ".figure", "unknown figure");
  f.figure = *figure;
  auto value = PerfMilli(j["value"], at + ".value");
  if (!value.ok()) return value.error();
  auto median = PerfMilli(j["median"], at + ".median");
  if (!median.ok()) return median.error();
  f.value = *value;
  f.median = *median;
  return f;
}

// The "perf" member: bounded like the rest (rows and flags are per worker, each once).
Result<PerfVerdict> ReadPerf(Reader& rd, const oci::Json& j) {
  IMGTOOL_TRY(rd.Keys(j, "$.perf",
                      {"threshold_permille", "warn_only", "skipped", "medians", "complete", "rows", "flags"},
                      {"threshold_permille", "warn_only", "skipped", "medians", "complete", "rows", "flags"}));
  PerfVerdict p;
  p.ran = true;
  auto threshold = rd.Int(j["threshold_permille"], "$.perf.threshold_permille", 1, 1000);
  if (!threshold.ok()) return threshold.error();
  p.threshold_permille = *threshold;
  if (!j["warn_only"].is_boolean() || !j["complete"].is_boolean())
    return Bad("$.perf", "warn_only, complete: not booleans");
  p.warn_only = j["warn_only"].get<bool>();
  p.complete = j["complete"].get<bool>();
  auto skipped = rd.String(j["skipped"], "$.perf.skipped", kMaxFieldValueBytes);
  if (!skipped.ok()) return skipped.error();
  p.skipped = *skipped;
  auto medians = PerfFigureMap(j["medians"], "$.perf.medians");
  if (!medians.ok()) return medians.error();
  p.medians = std::move(*medians);
  const size_t max_entries = rd.ranks_.size() * PerfFigureNames().size();
  for (const char* list : {"rows", "flags"}) {
    const std::string at = std::string("$.perf.") + list;
    if (!j[list].is_array()) return Bad(at, "not an array");
    if (j[list].size() > max_entries) return Bad(at, "more entries than workers have figures");
  }
  for (size_t i = 0; i < j["rows"].size(); ++i) {
    const std::string at = "$.perf.rows[" + std::to_string(i) + "]";
    const oci::Json& row = j["rows"][i];
    IMGTOOL_TRY(rd.Keys(row, at, {"rank", "figures", "error"}, {"rank"}));
    if (row.size() != 2) return Bad(at, "a row has a rank and either figures or an error");
    auto rank = PerfRank(rd, row["rank"], at + ".rank");
    if (!rank.ok()) return rank.error();
    if (p.rows.count(*rank)) return Bad(at + ".rank", "listed twice");
    PerfFigures f;
    if (row.contains("error")) {
      auto e = rd.String(row["error"], at + ".error", kMaxPerfErrorBytes);
      if (!e.ok()) return e.error();
      if (e->empty()) return Bad(at + ".error", "empty");
      f.error = *e;
    } else {
      auto m = PerfFigureMap(row["figures"], at + ".figures");
      if (!m.ok()) return m.error();
      f.milli = std::move(*m);
    }
    p.rows[*rank] = std::move(f);
  }
  for (size_t i = 0; i < j["flags"].size(); ++i) {
    auto f = ReadPerfFlag(rd, j["flags"][i], "$.perf.flags[" + std::to_string(i) + "]");
    if (!f.ok()) return f.error();
    p.flags.push_back(std::move(*f));
  }
  return p;
}

}  // namespace

std::string VerdictToWire(const Verdict& v, WireWorkers workers) {
  oci::Json diffs = oci::Json::array();
  for (const auto& d : v.diffs) {
    oci::Json groups = oci::Json::array();
    for (const auto& g : d.groups) groups.push_back({{"value", g.value}, {"ranks", Runs(g.ranks)}});
    oci::Json j = {{"field", d.field}, {"groups", groups}};
    if (!d.platform.empty()) j["platform"] = d.platform;
    if (d.expected) j["expected"] = *d.expected;
    diffs.push_back(j);
  }
  oci::Json j = {{"version", kWireVersion}, {"expected_workers", v.expected_workers}, {"missing", Runs(v.missing)},
                 {"diffs", diffs},          {"suspects", Runs(v.suspects)},           {"notes", oci::Json(v.notes)}};
  if (v.perf.ran) j["perf"] = PerfToJson(v.perf);
  if (workers == WireWorkers::kInclude) {
    oci::Json a = oci::Json::array();
    for (const auto& w : v.workers) a.push_back({{"rank", w.rank}, {"name", w.name}, {"address", w.address}});
    j["workers"] = a;
  }
  auto text = oci::CanonicalJson(j);
  // Only invalid UTF-8 fails, which no parsed fingerprint holds; keep the bytes visible.
  return text.ok() ? *text : j.dump(-1, ' ', false, oci::Json::error_handler_t::replace);
}

Result<Verdict> VerdictFromWire(const std::string& text, const std::vector<WorkerId>& workers) {
  if (text.size() > kMaxWireBytes) {
    return Bad("verdict",
               std::to_string(text.size()) + " bytes, more than the limit of " + std::to_string(kMaxWireBytes));
  }
  auto parsed = oci::ParseJson(text, "verdict");
  if (!parsed.ok()) return parsed.error();
  const oci::Json& j = *parsed;
  Reader rd;
  IMGTOOL_TRY(rd.Keys(j, "$",
                      {"version", "expected_workers", "workers", "missing", "diffs", "suspects", "notes", "perf"},
                      {"version", "expected_workers", "missing", "diffs", "suspects", "notes"}));
  auto version = rd.Int(j["version"], "$.version", 0, INT32_MAX);
  if (!version.ok()) return version.error();
  if (*version != kWireVersion) {
    return Bad("$.version", "version " + std::to_string(*version) + ", this imgtool reads " +
                                std::to_string(kWireVersion) + " (chief and workers run different imgtools?)");
  }
  Verdict v;
  auto expected = rd.Int(j["expected_workers"], "$.expected_workers", 0, kMaxWorkers);
  if (!expected.ok()) return expected.error();
  v.expected_workers = *expected;

  if (j.contains("workers")) {
    auto w = ReadWorkers(rd, j["workers"]);
    if (!w.ok()) return w.error();
    if (!workers.empty() && *w != workers) {
      return MakeError(ErrorKind::kIntegrity, "$.workers: the chief's cluster differs from this worker's");
    }
    v.workers = std::move(*w);
  } else {
    if (!workers.empty() && static_cast<int>(workers.size()) != v.expected_workers) {
      return MakeError(ErrorKind::kIntegrity, "$.expected_workers: the chief counts " +
                                                  std::to_string(v.expected_workers) +
                                                  " workers, this worker's cluster " + std::to_string(workers.size()));
    }
    v.workers = workers;
    std::sort(v.workers.begin(), v.workers.end(), [](const WorkerId& a, const WorkerId& b) { return a.rank < b.rank; });
  }
  if (static_cast<int>(v.workers.size()) != v.expected_workers) {
    return Bad(v.workers.empty() ? "$.workers" : "$.expected_workers",
               v.workers.empty() ? "missing (the verdict was sent without workers; pass the cluster's)"
                                 : std::to_string(v.expected_workers) + " but " + std::to_string(v.workers.size()) +
                                       " workers are listed");
  }
  for (const auto& w : v.workers) rd.ranks_.push_back(w.rank);

  auto missing = rd.Ranks(j["missing"], "$.missing", false);
  if (!missing.ok()) return missing.error();
  v.missing = std::move(*missing);

  const oci::Json& diffs = j["diffs"];
  if (!diffs.is_array()) return Bad("$.diffs", "not an array");
  if (diffs.size() > kMaxDiffs) return Bad("$.diffs", "more than " + std::to_string(kMaxDiffs));
  std::set<std::string> fields;
  for (size_t i = 0; i < diffs.size(); ++i) {
    std::string at = "$.diffs[" + std::to_string(i) + "]";
    auto d = ReadDiff(rd, diffs[i], at, v.missing);
    if (!d.ok()) return d.error();
    std::string key = d->platform.empty() ? d->field : d->field + " (" + d->platform + ")";
    if (!fields.insert(key).second) return Bad(at + ".field", "'" + key + "' is listed twice");
    v.diffs.push_back(std::move(*d));
  }

  auto suspects = rd.Ranks(j["suspects"], "$.suspects", false);
  if (!suspects.ok()) return suspects.error();
  v.suspects = std::move(*suspects);

  const oci::Json& notes = j["notes"];
  if (!notes.is_object()) return Bad("$.notes", "not an object");
  if (notes.size() > kMaxNotes) return Bad("$.notes", "more than " + std::to_string(kMaxNotes) + " entries");
  for (const auto& [key, value] : notes.items()) {
    if (key.empty() || key.size() > kMaxFieldNameBytes)
      return Bad("$.notes", "a key of " + std::to_string(key.size()) + " bytes");
    auto s = rd.String(value, "$.notes." + key, kMaxFieldValueBytes);
    if (!s.ok()) return s.error();
    v.notes[key] = *s;
  }
  if (j.contains("perf")) {
    auto perf = ReadPerf(rd, j["perf"]);
    if (!perf.ok()) return perf.error();
    v.perf = std::move(*perf);
  }
  return v;
}

}  // namespace imgtool::fleet
