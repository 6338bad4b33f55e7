// The perf decision and a worker's perf record (perf_verdict.h): pure, integer arithmetic.
#include "fleet/perf_verdict.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "oci/canonical_json.h"

namespace imgtool::fleet {

namespace {

constexpr int64_t kMaxMilli = 1'000'000'000'000'000;  // 10^15: 10^12 GFLOP/s is no CPU's
constexpr size_t kMaxRecordBytes = 8u << 10;
constexpr size_t kMaxErrorBytes = 1024;

Error Bad(const std::string& why) { return MakeError(ErrorKind::kInvalidInput, "perf record: " + why); }

bool KnownFigure(const std::string& name) {
  const auto& names = PerfFigureNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

const std::vector<std::string>& PerfFigureNames() {
  static const std::vector<std::string> names = {kPerfGemm, kPerfAllreduce};
  return names;
}

std::string PerfUnit(const std::string& figure) { return figure == kPerfGemm ? "GFLOP/s" : "GB/s busbw"; }

int64_t MedianMilli(std::vector<int64_t> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  if (n % 2 == 1) return values[n / 2];
  // Both are below 10^15, so the sum cannot overflow.
  return (values[n / 2 - 1] + values[n / 2]) / 2;
}

PerfVerdict DecidePerf(const std::map<int, PerfFigures>& figures, int threshold_permille, bool warn_only) {
  PerfVerdict v;
  v.ran = true;
  v.threshold_permille = threshold_permille;
  v.warn_only = warn_only;
  for (const auto& name : PerfFigureNames()) {
    std::vector<int64_t> values;
    for (const auto& [rank, f] : figures) {
      if (auto it = f.milli.find(name); it != f.milli.end()) values.push_back(it->second);
    }
    if (!values.empty()) v.medians[name] = MedianMilli(std::move(values));
  }
  for (const auto& [rank, f] : figures) {
    if (!f.error.empty()) {
      v.flags.push_back({rank, "", 0, 0, f.error});
      continue;
    }
    for (const auto& name : PerfFigureNames()) {
      auto it = f.milli.find(name);
      if (it == f.milli.end()) continue;
      const int64_t median = v.medians.at(name);
      // value < threshold * median, exactly: both sides below 10^15 * 1000.
      if (it->second * 1000 < static_cast<int64_t>(threshold_permille) * median) {
        v.flags.push_back({rank, name, it->second, median, ""});
      }
    }
  }
  const bool all = static_cast<int>(figures.size()) <= kPerfMaxRows;
  v.complete = all;
  for (const auto& [rank, f] : figures) {
    bool flagged = std::any_of(v.flags.begin(), v.flags.end(), [r = rank](const PerfFlag& x) { return x.rank == r; });
    if (all || flagged) v.rows[rank] = f;
  }
  return v;
}

std::string PerfDisplay(const std::string& figure, int64_t milli) {
  char buf[48];
  if (figure == kPerfGemm) {
    std::snprintf(buf, sizeof(buf), "%.1f", static_cast<double>(milli) / 1000.0);
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f", static_cast<double>(milli) / 1000.0);
  }
  return buf;
}

std::string PerfFlagLine(const PerfFlag& flag, const std::string& worker_name, int threshold_permille) {
  const std::string who = worker_name + " (rank " + std::to_string(flag.rank) + "): ";
  if (flag.figure.empty()) return who + "perf step failed: " + flag.error;
  // Percent of the median, rounded down so "49%" is never shown for a worker at 49.9%.
  const int64_t percent = flag.median > 0 ? flag.value * 100 / flag.median : 0;
  char threshold[16];
  std::snprintf(threshold, sizeof(threshold), "%g", threshold_permille / 10.0);
  return who + flag.figure + " " + PerfDisplay(flag.figure, flag.value) + " " + PerfUnit(flag.figure) + ", " +
         std::to_string(percent) + "% of the median " + PerfDisplay(flag.figure, flag.median) + ": below " + threshold +
         "%";
}

std::string PerfRecordToWire(const PerfFigures& figures) {
  oci::Json j = oci::Json::object();
  if (!figures.error.empty()) {
    j["error"] = figures.error.substr(0, kMaxErrorBytes);
  } else {
    j["figures"] = oci::Json(figures.milli);
  }
  return j.dump(-1, ' ', false, oci::Json::error_handler_t::replace);
}

Result<PerfFigures> PerfRecordFromWire(const std::string& text) {
  if (text.size() > kMaxRecordBytes) return Bad(std::to_string(text.size()) + " bytes");
  auto parsed = oci::ParseJson(text, "perf record");
  if (!parsed.ok()) return parsed.error();
  const oci::Json& j = *parsed;
  if (!j.is_object() || j.size() != 1) return Bad("not an object with one key");
  PerfFigures out;
  if (j.contains("error")) {
    if (!j["error"].is_string()) return Bad("error: not a string");
    out.error = j["error"].get<std::string>();
    if (out.error.empty() || out.error.size() > kMaxErrorBytes) return Bad("error: empty or too long");
    return out;
  }
  if (!j.contains("figures") || !j["figures"].is_object()) return Bad("no figures");
  for (const auto& [name, value] : j["figures"].items()) {
    if (!KnownFigure(name)) return Bad("unknown figure '" + name.substr(0, 40) + "'");
    if (!value.is_number_integer()) return Bad(name + ": not an integer");
    if (value.is_number_unsigned() ? value.get<uint64_t>() > static_cast<uint64_t>(kMaxMilli)
                                   : (value.get<int64_t>() < 0 || value.get<int64_t>() > kMaxMilli)) {
      return Bad(name + ": out of range");
    }
    out.milli[name] = value.get<int64_t>();
  }
  return out;
}

std::string RingRecordToWire(const std::vector<char>& to_left, const std::vector<char>& to_right) {
  std::string out;
  for (const auto* bytes : {&to_left, &to_right}) {
    const auto n = static_cast<uint32_t>(bytes->size());
    for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>((n >> shift) & 0xff));
    out.append(bytes->begin(), bytes->end());
  }
  return out;
}

Result<std::vector<char>> RingRecordEntry(const std::string& record, int which) {
  constexpr uint32_t kMaxAddressBytes = 1024;  // a Gloo TCP address is 136
  size_t at = 0;
  for (int i = 0; i <= which && which < 2; ++i) {
    if (record.size() - at < 4) break;
    const auto* p = reinterpret_cast<const unsigned char*>(record.data() + at);
    const uint32_t n = p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24);
    at += 4;
    if (n > kMaxAddressBytes || record.size() - at < n) break;
    if (i == which)
      return std::vector<char>(record.begin() + static_cast<long>(at), record.begin() + static_cast<long>(at + n));
    at += n;
  }
  return MakeError(ErrorKind::kInvalidInput, "not a ring address record with entry " + std::to_string(which));
}

}  // namespace imgtool::fleet
