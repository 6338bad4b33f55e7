// The verdict as people and machines read it: Summary (one line), RenderText (the
// nccl-tests style table with an OK / FAILED footer) and RenderJson. Pure: returns text.
#include "fleet/compare.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "oci/digest.h"

namespace imgtool::fleet {

namespace {

constexpr size_t kSummaryEntries = 4;  // workers or runs named in the one-line summary
constexpr size_t kSummaryFields = 5;   // field names in the summary
constexpr size_t kTableEntries = 64;   // workers or runs in one table cell
constexpr size_t kMaxValueWidth = 96;  // longer values are cut, with their size and hash

// Control characters (C0, DEL and C1) escaped, so a value from a worker cannot move the
// cursor or retitle the terminal. The input is valid UTF-8 (the wire parser checks).
std::string Printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    char buf[8];
    if (c < 0x20 || c == 0x7f) {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) < 0xa0 &&
               static_cast<unsigned char>(s[i + 1]) >= 0x80) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(s[++i]));
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// Columns on a terminal, counting code points (wide characters are rare in our fields).
size_t Width(std::string_view s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xc0) != 0x80; }));
}

std::string DisplayValue(const std::string& value) {
  std::string p = Printable(value);
  if (Width(p) <= kMaxValueWidth) return p;
  size_t cut = 0;
  for (size_t points = 0; cut < p.size() && points < 64; ++points) {
    ++cut;
    while (cut < p.size() && (static_cast<unsigned char>(p[cut]) & 0xc0) == 0x80) ++cut;
  }
  return p.substr(0, cut) + "... (" + std::to_string(value.size()) + " bytes, " +
         oci::Digest::Of(value).hex().substr(0, 12) + ")";
}

// Workers by name: "worker 1", its address, and lists compressed into runs.
class Names {
 public:
  explicit Names(const std::vector<WorkerId>& workers) {
    for (const auto& w : workers) by_rank_[w.rank] = &w;
  }

  std::string Name(int rank) const {
    auto it = by_rank_.find(rank);
    if (it == by_rank_.end() || it->second->name.empty()) return "rank " + std::to_string(rank);
    return Printable(it->second->name);
  }

  struct Entry {
    std::string text;
    size_t workers = 0;
  };

  // Runs of 3 or more consecutive names "<prefix> <n>" become "<prefix> <a>-<b>"; the
  // rest are named one by one, "name (address)" when `with_address` and one is known.
  // Names are unique, so a run of consecutive numbers holds every worker in between.
  std::vector<Entry> Entries(const std::vector<int>& ranks, bool with_address) const {
    std::vector<Entry> out;
    size_t i = 0;
    while (i < ranks.size()) {
      auto first = Split(Name(ranks[i]));
      size_t j = i + 1;
      if (first) {
        for (long n = first->second + 1; j < ranks.size(); ++j, ++n) {
          auto next = Split(Name(ranks[j]));
          if (!next || next->first != first->first || next->second != n) break;
        }
      }
      if (j - i >= 3) {
        out.push_back({first->first + " " + std::to_string(first->second) + "-" +
                           std::to_string(first->second + static_cast<long>(j - i) - 1),
                       j - i});
      } else {
        out.push_back({Describe(ranks[i], with_address), 1});
        j = i + 1;  // a run of two: its second worker may start a run of its own
      }
      i = j;
    }
    return out;
  }

 private:
  std::string Describe(int rank, bool with_address) const {
    std::string s = Name(rank);
    auto it = by_rank_.find(rank);
    if (with_address && it != by_rank_.end() && !it->second->address.empty()) {
      s += " (" + Printable(it->second->address) + ")";
    }
    return s;
  }

  // "worker 12" -> ("worker", 12); names whose number is not in its plain form do not split.
  static std::optional<std::pair<std::string, long>> Split(const std::string& name) {
    auto space = name.rfind(' ');
    if (space == std::string::npos) return std::nullopt;
    std::string digits = name.substr(space + 1);
    if (digits.empty() || digits.size() > 9 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
    return std::make_pair(name.substr(0, space), std::stol(digits));
  }

  std::map<int, const WorkerId*> by_rank_;
};

// "a, b, c and 12 more" (12 workers not named).
std::string Join(const std::vector<Names::Entry>& entries, size_t max_entries) {
  std::string out;
  size_t rest = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i < max_entries) {
      out += (i ? ", " : "") + entries[i].text;
    } else {
      rest += entries[i].workers;
    }
  }
  if (rest) out += " and " + std::to_string(rest) + " more";
  return out;
}

size_t Count(const std::vector<Names::Entry>& entries) {
  size_t n = 0;
  for (const auto& e : entries) n += e.workers;
  return n;
}

// The platforms in Compare's "platforms" note ("linux/amd64: 1 worker, linux/arm64: 2 workers").
size_t PlatformCount(const std::string& note) { return static_cast<size_t>(std::count(note.begin(), note.end(), ':')); }

// "nccl", or "lib.libnccl.so.2 on linux/arm64" for a field compared within a platform.
std::string FieldLabel(const FieldDiff& d) {
  return Printable(d.field) + (d.platform.empty() ? "" : " on " + Printable(d.platform));
}

// "2 fields differ (nccl, env.NCCL_ALGO)".
std::string FieldsPart(const std::vector<FieldDiff>& diffs) {
  std::string s = std::to_string(diffs.size()) + (diffs.size() == 1 ? " field differs (" : " fields differ (");
  for (size_t i = 0; i < diffs.size() && i <= kSummaryFields; ++i) {
    s += (i ? ", " : "") + (i == kSummaryFields ? std::string("...") : FieldLabel(diffs[i]));
  }
  return s + ")";
}

// Who is off: the workers outside the largest group of each differing field, "no
// majority" when a field's two largest groups tie, or everyone when only --expect fails.
std::string WhoPart(const Verdict& v, const Names& names) {
  std::vector<int> outliers;
  bool between = false;
  for (const auto& d : v.diffs) {
    if (d.groups.size() < 2) continue;
    between = true;
    if (d.groups[0].ranks.size() == d.groups[1].ranks.size()) {
      // "2 and 2 workers", "3, 3 and 1 workers", "9 groups of at most 2 workers".
      std::string sizes;
      if (d.groups.size() > 4) {
        sizes = std::to_string(d.groups.size()) + " groups of at most " + std::to_string(d.groups[0].ranks.size());
      } else {
        for (size_t i = 0; i < d.groups.size(); ++i) {
          sizes += (i == 0 ? "" : i + 1 == d.groups.size() ? " and " : ", ") + std::to_string(d.groups[i].ranks.size());
        }
      }
      return "no majority for " + FieldLabel(d) + " (" + sizes + " workers)";
    }
    for (size_t i = 1; i < d.groups.size(); ++i) {
      outliers.insert(outliers.end(), d.groups[i].ranks.begin(), d.groups[i].ranks.end());
    }
  }
  if (!between) {
    int arrived = v.expected_workers - static_cast<int>(v.missing.size());
    if (arrived == 1) {
      for (const auto& d : v.diffs) {
        if (!d.groups.empty() && !d.groups[0].ranks.empty()) {
          return names.Name(d.groups[0].ranks[0]) + " differs from --expect";
        }
      }
    }
    return "all " + std::to_string(arrived) + " workers differ from --expect";
  }
  std::sort(outliers.begin(), outliers.end());
  outliers.erase(std::unique(outliers.begin(), outliers.end()), outliers.end());
  auto entries = names.Entries(outliers, false);
  return Join(entries, kSummaryEntries) + (Count(entries) == 1 ? " differs" : " differ") + " from the majority";
}

oci::Json WorkerJson(int rank, const std::map<int, const WorkerId*>& by_rank) {
  auto it = by_rank.find(rank);
  if (it == by_rank.end()) return {{"rank", rank}, {"name", ""}, {"address", ""}};
  return {{"rank", rank}, {"name", it->second->name}, {"address", it->second->address}};
}

// The local verdict of a worker whose chief never answered (gather.cc's ChiefMissing).
bool ChiefNeverAnswered(const Verdict& v) { return v.notes.count("chief") != 0 && v.missing == std::vector<int>{0}; }

// The workers flagged by --perf, named once each: "worker 2 (gemm), worker 3 (perf step failed)".
std::string SlowPart(const PerfVerdict& p, const Names& names) {
  std::map<int, std::string> what;
  for (const auto& f : p.flags) {
    std::string& w = what[f.rank];
    w += (w.empty() ? "" : ", ") + (f.figure.empty() ? std::string("perf step failed") : f.figure);
  }
  std::string s;
  size_t shown = 0;
  for (const auto& [rank, figures] : what) {
    if (shown++ == kSummaryEntries) {
      s += " and " + std::to_string(what.size() - kSummaryEntries) + " more";
      break;
    }
    s += (s.empty() ? "" : ", ") + names.Name(rank) + " (" + figures + ")";
  }
  char threshold[16];
  std::snprintf(threshold, sizeof(threshold), "%g", p.threshold_permille / 10.0);
  return s + " below " + threshold + "% of the median";
}

// The perf section: a table of figures (the median first), the flag lines, or why skipped.
std::string PerfSection(const PerfVerdict& p, const Names& names) {
  if (!p.skipped.empty()) return "perf: skipped: " + Printable(p.skipped) + "\n";
  std::vector<std::array<std::string, 3>> rows = {{"PERF", "GEMM GFLOP/s", "ALLREDUCE GB/s (busbw)"}};
  auto cell = [](const std::map<std::string, int64_t>& m, const char* figure) {
    auto it = m.find(figure);
    return it == m.end() ? std::string("-") : PerfDisplay(figure, it->second);
  };
  rows.push_back({"median", cell(p.medians, kPerfGemm), cell(p.medians, kPerfAllreduce)});
  for (const auto& [rank, f] : p.rows) {
    if (!f.error.empty()) {
      rows.push_back({names.Name(rank), "failed", "failed"});
    } else {
      rows.push_back({names.Name(rank), cell(f.milli, kPerfGemm), cell(f.milli, kPerfAllreduce)});
    }
  }
  size_t w0 = 0, w1 = 0;
  for (const auto& r : rows) {
    w0 = std::max(w0, Width(r[0]));
    w1 = std::max(w1, Width(r[1]));
  }
  std::string out;
  for (const auto& r : rows) {
    out += r[0] + std::string(w0 - Width(r[0]) + 2, ' ') + r[1] + std::string(w1 - Width(r[1]) + 2, ' ') + r[2] + "\n";
  }
  if (!p.complete) out += "(figures of flagged workers only: more than " + std::to_string(kPerfMaxRows) + " workers)\n";
  for (const auto& f : p.flags) {
    out += Printable(PerfFlagLine(f, names.Name(f.rank), p.threshold_permille)) +
           (p.warn_only ? " (--perf-warn)" : "") + "\n";
  }
  return out;
}

oci::Json PerfJson(const PerfVerdict& p, const std::map<int, const WorkerId*>& by_rank) {
  oci::Json workers = oci::Json::array();
  for (const auto& [rank, f] : p.rows) {
    oci::Json w = WorkerJson(rank, by_rank);
    if (!f.error.empty()) w["error"] = f.error;
    for (const auto& [name, milli] : f.milli) w[name] = static_cast<double>(milli) / 1000.0;
    workers.push_back(w);
  }
  oci::Json medians = oci::Json::object();
  for (const auto& [name, milli] : p.medians) medians[name] = static_cast<double>(milli) / 1000.0;
  oci::Json flags = oci::Json::array();
  for (const auto& f : p.flags) {
    oci::Json j = WorkerJson(f.rank, by_rank);
    if (f.figure.empty()) {
      j["error"] = f.error;
    } else {
      j["figure"] = f.figure;
      j["value"] = static_cast<double>(f.value) / 1000.0;
      j["median"] = static_cast<double>(f.median) / 1000.0;
    }
    flags.push_back(j);
  }
  return {{"threshold", p.threshold_permille / 1000.0},
          {"warn_only", p.warn_only},
          {"skipped", p.skipped},
          {"units", {{kPerfGemm, PerfUnit(kPerfGemm)}, {kPerfAllreduce, PerfUnit(kPerfAllreduce)}}},
          {"medians", medians},
          {"complete", p.complete},
          {"workers", workers},
          {"flags", flags},
          {"fails", p.Fails()}};
}

}  // namespace

std::string Verdict::Summary() const {
  Names names(workers);
  std::string s = "fleet check: ";
  if (ChiefNeverAnswered(*this)) {
    // This worker never heard from the chief, so it cannot know who else arrived.
    return s + "no verdict: the chief never answered; missing: " + Join(names.Entries(missing, true), kSummaryEntries);
  }
  if (!missing.empty()) {
    s += std::to_string(expected_workers - static_cast<int>(missing.size())) + " of " +
         std::to_string(expected_workers) + " arrived; missing: " + Join(names.Entries(missing, true), kSummaryEntries);
    if (!diffs.empty()) s += "; " + FieldsPart(diffs);
    return s;
  }
  if (ok()) {
    s += "OK: " + std::to_string(expected_workers) + " of " + std::to_string(expected_workers) +
         (expected_workers == 1 ? " worker matches" : " workers match");
    if (auto it = notes.find("fingerprint"); it != notes.end()) {
      s += " (fingerprint " + Printable(it->second.substr(0, 19)) + ")";
    }
    if (notes.count("platforms")) s += " across " + std::to_string(PlatformCount(notes.at("platforms"))) + " platforms";
    if (!perf.flags.empty()) s += "; perf warning: " + SlowPart(perf, names);
    return s;
  }
  if (diffs.empty() && suspects.empty()) return s + "SLOW: " + SlowPart(perf, names);
  s += "MISMATCH: ";
  if (!diffs.empty()) s += FieldsPart(diffs) + "; " + WhoPart(*this, names);
  if (!suspects.empty()) {
    s += std::string(diffs.empty() ? "" : "; ") +
         "golden run suspects: " + Join(names.Entries(suspects, false), kSummaryEntries);
  }
  if (!perf.flags.empty()) s += "; slow: " + SlowPart(perf, names);
  return s;
}

std::string RenderText(const Verdict& v) {
  Names names(v.workers);
  std::vector<std::string> sections = {v.Summary() + "\n"};

  if (!v.diffs.empty()) {
    std::vector<std::array<std::string, 3>> rows = {{"FIELD", "VALUE", "WORKERS"}};
    for (const auto& d : v.diffs) {
      std::string field = FieldLabel(d);
      if (d.expected) rows.push_back({std::exchange(field, ""), DisplayValue(*d.expected), "(expected)"});
      for (const auto& g : d.groups) {
        rows.push_back(
            {std::exchange(field, ""), DisplayValue(g.value), Join(names.Entries(g.ranks, false), kTableEntries)});
      }
    }
    size_t w0 = 0, w1 = 0;
    for (const auto& r : rows) {
      w0 = std::max(w0, Width(r[0]));
      w1 = std::max(w1, Width(r[1]));
    }
    std::string table;
    for (const auto& r : rows) {
      table +=
          r[0] + std::string(w0 - Width(r[0]) + 2, ' ') + r[1] + std::string(w1 - Width(r[1]) + 2, ' ') + r[2] + "\n";
    }
    sections.push_back(table);
  }

  if (v.perf.ran) sections.push_back(PerfSection(v.perf, names));

  std::string details;
  if (!v.missing.empty()) details += "missing: " + Join(names.Entries(v.missing, true), kTableEntries) + "\n";
  if (!v.suspects.empty()) {
    details += "golden run suspects: " + Join(names.Entries(v.suspects, false), kTableEntries) + "\n";
  }
  for (const auto& [key, value] : v.notes) details += Printable(key) + ": " + DisplayValue(value) + "\n";
  if (!details.empty()) sections.push_back(details);

  sections.push_back(v.ok() ? "OK\n" : "FAILED (exit " + std::to_string(v.ExitCode()) + ")\n");
  std::string out;
  for (size_t i = 0; i < sections.size(); ++i) out += (i ? "\n" : "") + sections[i];
  return out;
}

oci::Json RenderJson(const Verdict& v) {
  std::map<int, const WorkerId*> by_rank;
  for (const auto& w : v.workers) by_rank[w.rank] = &w;
  auto workers_of = [&](const std::vector<int>& ranks) {
    oci::Json a = oci::Json::array();
    for (int r : ranks) a.push_back(WorkerJson(r, by_rank));
    return a;
  };
  oci::Json diffs = oci::Json::array();
  for (const auto& d : v.diffs) {
    oci::Json groups = oci::Json::array();
    for (const auto& g : d.groups) {
      oci::Json names = oci::Json::array();
      for (int r : g.ranks) names.push_back(WorkerJson(r, by_rank)["name"]);
      groups.push_back({{"value", g.value}, {"ranks", g.ranks}, {"workers", names}});
    }
    oci::Json j = {{"field", d.field}, {"groups", groups}};
    j["scope"] = d.platform.empty() ? "fleet" : "platform";
    if (!d.platform.empty()) j["platform"] = d.platform;
    if (d.expected) j["expected"] = *d.expected;
    diffs.push_back(j);
  }
  oci::Json out = {
      {"ok", v.ok()},
      {"exit_code", v.ExitCode()},
      {"summary", v.Summary()},
      {"expected_workers", v.expected_workers},
      {"arrived",
       ChiefNeverAnswered(v) ? oci::Json(nullptr) : oci::Json(v.expected_workers - static_cast<int>(v.missing.size()))},
      {"missing", workers_of(v.missing)},
      {"diffs", diffs},
      {"suspects", workers_of(v.suspects)},
      {"notes", oci::Json(v.notes)}};
  if (v.perf.ran) out["perf"] = PerfJson(v.perf, by_rank);
  return out;
}

}  // namespace imgtool::fleet
