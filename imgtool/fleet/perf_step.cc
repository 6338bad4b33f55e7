// The perf step's choreography over the rendezvous store (perf_step.h). Keys, each
// written once (trainer/cluster/store_keys.h: a key ending in a rank is that rank's):
//   perfhost/<rank>        that worker's host name                      that rank
//   perfturn/<rank>/prev   "first", "after <rank>" or "skip <why>"     the chief
//   perfgemm/<rank>        "done": the next worker of its host may go   that rank
//   perfring/<rank>        its Gloo ring addresses (perf_measure.cc)    that rank
//   perfleft/<rank>        "left": done with the ring, pairs may close  that rank
//   perf/<rank>            PerfRecordToWire                             that rank
#include "fleet/perf_step.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

namespace imgtool::fleet {

namespace {

constexpr size_t kMaxHostBytes = 255;  // HOST_NAME_MAX; a longer one is nobody's host

std::string HostKey(int rank) { return "perfhost/" + std::to_string(rank); }
std::string TurnKey(int rank) { return "perfturn/" + std::to_string(rank) + "/prev"; }
std::string GemmKey(int rank) { return "perfgemm/" + std::to_string(rank); }
std::string RecordKey(int rank) { return "perf/" + std::to_string(rank); }

std::string Secs(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%gs", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

std::string ThisHost() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

Result<std::string> Read(trainer::TcpStoreClient& store, const std::string& key) {
  auto v = store.Get(key);
  if (!v.ok()) return v.error();
  if (!v->has_value()) return MakeError(ErrorKind::kInternal, key + " vanished from the store");
  return **v;
}

int64_t Milli(double x) { return std::isfinite(x) && x > 0 ? static_cast<int64_t>(std::llround(x * 1000)) : 0; }

// The turn: "first" -> -1, "after 3" -> 3; skip -> nullopt with *why.
std::optional<int> ParseTurn(const std::string& turn, int rank, std::string* why) {
  if (turn == "first") return -1;
  if (turn.rfind("after ", 0) == 0) {
    const std::string digits = turn.substr(6);
    if (!digits.empty() && digits.size() < 9 && digits.find_first_not_of("0123456789") == std::string::npos) {
      const int prev = std::stoi(digits);
      if (prev < rank) return prev;  // turns go in rank order, so never a cycle
    }
  }
  *why = turn.rfind("skip ", 0) == 0 ? turn.substr(5) : "a malformed turn from the chief";
  return std::nullopt;
}

// Steps 3 and 4 once the turn is known; the GEMM note is always written, so a failure here
// never holds up the next worker of the host for the whole timeout.
Result<PerfFigures> Measure(trainer::TcpStoreClient& store, const trainer::ClusterConfig& cluster, int prev,
                            const PerfOptions& options, std::chrono::milliseconds timeout) {
  const int rank = cluster.rank;
  if (prev >= 0) {
    auto st = store.Wait({GemmKey(prev)}, timeout);
    if (!st.ok()) {
      (void)store.Set(GemmKey(rank), "done");
      return st.error().Context("waiting for rank " + std::to_string(prev) + "'s GEMM on this host");
    }
  }
  GemmResult gemm = TimeGemm(options.gemm);
  IMGTOOL_TRY(store.Set(GemmKey(rank), "done"));
  PerfFigures f;
  f.milli[kPerfGemm] = Milli(gemm.gflops);
  if (cluster.world_size > 1) {
    AllreduceOptions a = options.allreduce;
    a.timeout = timeout;
    auto ar = TimeAllreduce(store, rank, cluster.world_size, cluster.self_host, a);
    if (!ar.ok()) return ar.error();
    f.milli[kPerfAllreduce] = Milli(ar->busbw_gbps);
  }
  return f;
}

}  // namespace

PerfOptions PerfOptionsFromFlags(bool perf, double threshold, bool warn_only) {
  PerfOptions o;
  o.enabled = perf;
  o.threshold_permille = static_cast<int>(std::clamp<long>(std::lround(threshold * 1000), 1, 1000));
  o.warn_only = warn_only;
  return o;
}

Status PublishPerfHost(trainer::TcpStoreClient& store, int rank, const PerfOptions& options) {
  return store.Set(HostKey(rank), options.host.empty() ? ThisHost() : options.host);
}

Result<std::string> PlanPerfTurns(trainer::TcpStoreClient& store, int world_size, const std::set<int>& absent) {
  std::vector<std::string> turns(static_cast<size_t>(world_size));
  std::string skipped;
  if (!absent.empty()) {
    skipped = std::to_string(absent.size()) + " of " + std::to_string(world_size) + " workers missing";
  }
  std::map<std::string, int> last_on_host;  // host -> the last rank given a turn there
  for (int r = 0; r < world_size && skipped.empty(); ++r) {
    auto host = store.Get(HostKey(r));
    if (!host.ok()) return host.error();
    if (!host->has_value()) {
      skipped = "rank " + std::to_string(r) + " runs without --perf";
      break;
    }
    // An over-long name shares no host: it runs concurrently, at worst timed under load.
    const std::string& name = **host;
    const std::string key = name.size() > kMaxHostBytes ? "rank " + std::to_string(r) : "host " + name;
    auto it = last_on_host.find(key);
    turns[static_cast<size_t>(r)] = it == last_on_host.end() ? "first" : "after " + std::to_string(it->second);
    last_on_host[key] = r;
  }
  if (!skipped.empty()) {
    for (auto& t : turns) t = "skip " + skipped;
  }
  for (int r = 0; r < world_size; ++r) IMGTOOL_TRY(store.Set(TurnKey(r), turns[static_cast<size_t>(r)]));
  return skipped;
}

std::optional<PerfFigures> RunPerfStep(trainer::TcpStoreClient& store, const trainer::ClusterConfig& cluster,
                                       const PerfOptions& options, std::chrono::milliseconds timeout) {
  const int rank = cluster.rank;
  if (!store.Wait({TurnKey(rank)}, timeout).ok()) return std::nullopt;
  auto turn = Read(store, TurnKey(rank));
  if (!turn.ok()) return std::nullopt;
  std::string why;
  auto prev = ParseTurn(*turn, rank, &why);
  if (!prev) return std::nullopt;
  auto measured = Measure(store, cluster, *prev, options, timeout);
  PerfFigures f;
  if (measured.ok()) {
    f = std::move(*measured);
  } else {
    f.error = measured.error().message;
  }
  (void)store.Set(RecordKey(rank), PerfRecordToWire(f));  // the chief flags a missing record
  return f;
}

Result<PerfVerdict> CollectPerf(trainer::TcpStoreClient& store, int world_size, const PerfOptions& options,
                                std::chrono::milliseconds timeout) {
  std::vector<std::string> keys, missing;
  for (int r = 0; r < world_size; ++r) keys.push_back(RecordKey(r));
  auto st = store.Wait(keys, timeout, &missing);
  if (!st.ok() && st.error().kind != ErrorKind::kNotFound) return st.error();
  const std::set<std::string> absent(missing.begin(), missing.end());
  std::map<int, PerfFigures> figures;
  for (int r = 0; r < world_size; ++r) {
    PerfFigures& f = figures[r];
    if (absent.count(RecordKey(r))) {
      f.error = "no perf figures within " + Secs(timeout);
      continue;
    }
    auto text = Read(store, RecordKey(r));
    if (!text.ok()) return text.error();
    auto parsed = PerfRecordFromWire(*text);
    if (!parsed.ok()) {
      f.error = "a malformed perf record: " + parsed.error().message.substr(0, 200);
    } else {
      f = std::move(*parsed);
    }
  }
  return DecidePerf(figures, options.threshold_permille, options.warn_only);
}

PerfVerdict PerfAlone(const PerfOptions& options) {
  PerfFigures f;
  f.milli[kPerfGemm] = Milli(TimeGemm(options.gemm).gflops);
  return DecidePerf({{0, f}}, options.threshold_permille, options.warn_only);
}

}  // namespace imgtool::fleet
