// The fleet check's exchange (protocol in gather.h). Keys in the store, and who may write
// them (trainer/cluster/store_keys.h; each once):
//   fp/<rank>         that worker's fingerprint digest (it arrived)         that rank
//   fpfull/<digest>   one full fingerprint with that digest (ToJson)        any rank
//   verdict           the chief's verdict (VerdictToWire without the        the chief
//                     worker list), or "error <kind> <message>" when the
//                     chief could not reach one
//   ack/<rank>        that worker has read the verdict: the chief may       that rank
//                     stop the store
// It is not a membership service: the cluster is what TF_CONFIG (or the flags) say.
#include "fleet/gather.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>

#include "cluster/tcp_store.h"

namespace imgtool::fleet {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A worker waits for the verdict this much longer than the chief waits for the workers:
// the chief's wait began before the worker connected, and Compare takes a moment.
constexpr auto kVerdictMargin = std::chrono::seconds(10);
// How long the chief keeps serving for workers that have yet to read the verdict.
constexpr auto kAckGrace = std::chrono::seconds(5);
// The chief connects to its own store; anything slower than this is not going to work.
constexpr auto kSelfConnect = std::chrono::seconds(5);
// With a progress callback, the chief's wait is cut in slices this long to report.
constexpr auto kProgressEvery = std::chrono::seconds(1);
constexpr char kVerdictKey[] = "verdict";
constexpr char kErrorPrefix[] = "error ";

std::string FpKey(int rank) { return "fp/" + std::to_string(rank); }
std::string FullKey(const std::string& digest) { return "fpfull/" + digest; }
std::string AckKey(int rank) { return "ack/" + std::to_string(rank); }

std::string Secs(milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%gs", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

std::string StoreAddress(const trainer::ClusterConfig& c) {
  bool v6 = c.store.host.find(':') != std::string::npos;
  return (v6 ? "[" + c.store.host + "]" : c.store.host) + ":" + std::to_string(c.store.port);
}

// "chief 0 at 10.0.0.1:2222": how reports name the chief.
std::string ChiefName(const std::vector<WorkerId>& workers, const trainer::ClusterConfig& c) {
  return workers[0].name + " at " + (workers[0].address.empty() ? StoreAddress(c) : workers[0].address);
}

milliseconds Left(Clock::time_point deadline) {
  return std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
}

// The verdict a worker reports when the chief never answered: the same report format as
// any missing worker (exit 3), with the reason as a note.
Verdict ChiefMissing(const std::vector<WorkerId>& workers, const std::string& why) {
  Verdict v;
  v.expected_workers = static_cast<int>(workers.size());
  v.workers = workers;
  v.missing = {0};
  v.notes["chief"] = why;
  return v;
}

// The full fingerprint as stored; invalid UTF-8 (which the probe escapes) cannot throw.
std::string FullJson(const Fingerprint& fp) {
  return ToJson(fp).dump(-1, ' ', false, oci::Json::error_handler_t::replace);
}

std::string ErrorToWire(const Error& e) {
  return kErrorPrefix + std::to_string(static_cast<int>(e.kind)) + " " + e.message;
}

Error ErrorFromWire(const std::string& text) {
  std::string rest = text.substr(sizeof(kErrorPrefix) - 1);
  size_t space = rest.find(' ');
  int kind = space == std::string::npos ? -1 : std::atoi(rest.substr(0, space).c_str());
  if (kind < static_cast<int>(ErrorKind::kInvalidInput) || kind > static_cast<int>(ErrorKind::kInternal)) {
    return MakeError(ErrorKind::kInternal, "a malformed error: " + text.substr(0, 200));
  }
  return MakeError(static_cast<ErrorKind>(kind), rest.substr(space + 1));
}

// A verdict of one fingerprint for every arrived worker must be this worker's own: the
// chief compared what the store held for us, and that must be what we sent.
Status CheckVerdictNamesUs(const Verdict& v, int rank, const std::string& digest, const std::string& chief) {
  auto common = v.notes.find("fingerprint");
  if (common == v.notes.end() || common->second == digest) return Status::Ok();
  if (std::find(v.missing.begin(), v.missing.end(), rank) != v.missing.end()) return Status::Ok();
  return MakeError(ErrorKind::kIntegrity, "the verdict of " + chief + " gives every worker fingerprint " +
                                              common->second.substr(0, 80) + ", but this worker's is " + digest +
                                              ": the chief did not compare what this worker sent");
}

struct Exchange {
  const trainer::ClusterConfig& cluster;
  const GatherOptions& options;
  std::vector<WorkerId> workers;
  std::string digest;  // this worker's
  std::unique_ptr<trainer::TcpStoreClient> client;
  int distinct = 0;
  // The chief's: every rank its store saw claimed twice (TcpStoreServer::conflicts).
  std::function<std::vector<std::string>()> conflicts;

  void Progress(const std::string& line) const {
    if (options.progress) options.progress(line);
  }

  // Stores this worker's full fingerprint unless one with its digest is there already
  // (another worker with the same digest may store it first: Add, not Set).
  Status PublishFull(const Fingerprint& mine) {
    auto has = client->Check(FullKey(digest));
    if (!has.ok()) return has.error();
    if (*has) return Status::Ok();
    auto added = client->Add(FullKey(digest), FullJson(mine));
    return added.ok() ? Status::Ok() : Status(added.error());
  }

  // Two processes with one rank (or an outsider in a worker's place) make any verdict a
  // lie about one of them: fail, naming both.
  Status RefuseConflicts() const {
    if (!conflicts) return Status::Ok();
    std::string lines;
    for (const auto& line : conflicts()) lines += (lines.empty() ? "" : "; ") + line;
    if (lines.empty()) return Status::Ok();
    return MakeError(ErrorKind::kDenied, "fleet check: " + lines +
                                             " (two processes run as one worker, or a process outside the job took "
                                             "a worker's rank; a job token keeps outsiders out)");
  }

  // The chief: wait for everyone (or the timeout), compare, publish. The verdict
  // returned is the one decoded from the wire, exactly what the workers decode.
  Result<Verdict> Chief(const Fingerprint& mine, Clock::time_point deadline) {
    // The full fingerprint first, then the digest: a digest anyone can read always has
    // its fingerprint stored already.
    IMGTOOL_TRY(PublishFull(mine));
    if (options.perf.enabled) IMGTOOL_TRY(PublishPerfHost(*client, 0, options.perf));
    IMGTOOL_TRY(client->Publish(FpKey(0), digest));
    std::vector<std::string> waiting;
    for (size_t r = 0; r < workers.size(); ++r) waiting.push_back(FpKey(static_cast<int>(r)));
    for (;;) {
      std::vector<std::string> missing;
      milliseconds slice = Left(deadline);
      if (options.progress) slice = std::min<milliseconds>(slice, kProgressEvery);
      auto st = client->Wait(waiting, slice, &missing);
      if (st.ok()) {
        waiting.clear();
        break;
      }
      if (st.error().kind != ErrorKind::kNotFound) return st.error();
      waiting = missing;
      if (Left(deadline) == milliseconds(0)) break;
      Progress("waiting for " + std::to_string(waiting.size()) + " of " + std::to_string(workers.size()) + " workers");
    }
    std::set<std::string> absent(waiting.begin(), waiting.end());
    IMGTOOL_TRY(RefuseConflicts());
    PerfVerdict perf;
    if (options.perf.enabled) {
      auto p = ChiefPerf(absent);
      if (!p.ok()) return p.error();
      perf = std::move(*p);
    }

    CompareInput in;
    in.workers = workers;
    in.ignore = options.ignore;
    in.expected = options.expected;
    in.digests[0] = digest;
    in.full[digest] = mine;
    // Every arrived digest in one pipelined read (N GETs, N/256 round trips).
    std::vector<int> arrived;
    std::vector<std::string> keys;
    for (size_t r = 1; r < workers.size(); ++r) {
      if (absent.count(FpKey(static_cast<int>(r))) == 0) {
        arrived.push_back(static_cast<int>(r));
        keys.push_back(FpKey(static_cast<int>(r)));
      }
    }
    auto digests = client->GetMany(keys);
    if (!digests.ok()) return digests.error();
    for (size_t i = 0; i < arrived.size(); ++i) {
      const int rank = arrived[i];
      const size_t r = static_cast<size_t>(rank);
      const auto& d = (*digests)[i];
      if (!d) return MakeError(ErrorKind::kInternal, FpKey(rank) + " vanished from the store");
      const std::string& theirs = *d;
      in.digests[rank] = theirs;
      if (in.full.count(theirs)) continue;
      auto text = client->Get(FullKey(theirs));
      if (!text.ok()) return text.error();
      if (!text->has_value()) {
        return MakeError(ErrorKind::kInternal,
                         workers[r].name + " published digest " + theirs.substr(0, 80) + " without its fingerprint");
      }
      auto fp = FingerprintFromJson(**text);
      if (!fp.ok()) return fp.error().Context(workers[r].name + "'s fingerprint");
      in.full[theirs] = std::move(*fp);
    }
    distinct = static_cast<int>(in.full.size());
    auto v = Compare(in);
    if (!v.ok()) return v.error();
    v->perf = std::move(perf);
    std::string wire = VerdictToWire(*v, WireWorkers::kOmit);
    IMGTOOL_TRY(client->Set(kVerdictKey, wire));
    auto decoded = VerdictFromWire(wire, workers);
    if (!decoded.ok()) return decoded.error().Context("decoding our own verdict");
    return decoded;
  }

  // The chief's part of the perf step (perf_step.h): plan the turns, measure, collect.
  Result<PerfVerdict> ChiefPerf(const std::set<std::string>& absent_keys) {
    std::set<int> absent;
    for (size_t r = 1; r < workers.size(); ++r) {
      if (absent_keys.count(FpKey(static_cast<int>(r)))) absent.insert(static_cast<int>(r));
    }
    const int n = static_cast<int>(workers.size());
    auto skipped = PlanPerfTurns(*client, n, absent);
    if (!skipped.ok()) return skipped.error().Context("perf step");
    if (!skipped->empty()) {
      PerfVerdict p = DecidePerf({}, options.perf.threshold_permille, options.perf.warn_only);
      p.skipped = *skipped;
      return p;
    }
    Progress("perf: GEMM (one worker per host at a time) and allreduce");
    (void)RunPerfStep(*client, cluster, options.perf, options.timeout);
    return CollectPerf(*client, n, options.perf, options.timeout);
  }

  // The chief: serves the store, runs Chief, publishes its verdict or its error, and
  // serves until every worker that arrived has read it (or the grace ends); returning
  // stops the store and frees the port for the trainer.
  Result<Verdict> Serve(const Fingerprint& mine, Clock::time_point deadline) {
    trainer::StoreLimits limits = trainer::StoreLimits::ForTasks(static_cast<int>(workers.size()));
    limits.log = options.store_log;
    const trainer::StoreAccess access{static_cast<int>(workers.size()), options.token};
    auto server = trainer::TcpStoreServer::Start(cluster.store.host, cluster.store.port, limits, access);
    if (!server.ok()) {
      const std::string from = cluster.store_source.empty() ? "TF_CONFIG or --rendezvous" : cluster.store_source;
      return trainer::WithPortHint(cluster, server.error().Context("fleet check: " + workers[0].name +
                                                                   " serves the rendezvous store on the chief's "
                                                                   "address (from " +
                                                                   from + ")"));
    }
    auto self =
        trainer::TcpStoreClient::Connect(cluster.store.host, cluster.store.port, kSelfConnect, (*server)->ChiefClaim());
    if (!self.ok()) {
      return self.error().Context("fleet check: " + ChiefName(workers, cluster) + " connecting to its own store");
    }
    client = std::move(*self);
    conflicts = [s = server->get()] { return s->conflicts(); };
    auto v = Chief(mine, deadline);
    if (!v.ok()) (void)client->Set(kVerdictKey, ErrorToWire(v.error()));  // so the workers stop waiting
    AwaitReaders(v.ok() ? v->missing : Absent());
    return v;
  }

  // Ranks whose fingerprint never arrived.
  std::vector<int> Absent() {
    std::vector<int> out;
    for (size_t r = 1; r < workers.size(); ++r) {
      auto has = client->Check(FpKey(static_cast<int>(r)));
      if (!has.ok() || !*has) out.push_back(static_cast<int>(r));
    }
    return out;
  }

  // Waits for ack/<rank> of every worker but the chief and the missing.
  void AwaitReaders(const std::vector<int>& missing) {
    std::vector<std::string> acks;
    for (size_t r = 1; r < workers.size(); ++r) {
      const int rank = static_cast<int>(r);
      if (std::find(missing.begin(), missing.end(), rank) == missing.end()) acks.push_back(AckKey(rank));
    }
    (void)client->Wait(acks, std::min<milliseconds>(options.timeout, kAckGrace));
  }

  // Every other worker: publish, wait for the chief's word.
  Result<Verdict> Worker(const Fingerprint& mine) {
    const int rank = cluster.rank;
    const std::string chief = ChiefName(workers, cluster);
    auto st = client->Wait({FpKey(0)}, options.timeout);
    if (!st.ok()) {
      if (st.error().kind != ErrorKind::kNotFound) return st.error().Context("waiting for " + chief);
      return ChiefMissing(workers, chief + ": its store answered, but no fingerprint within " + Secs(options.timeout));
    }
    auto theirs = client->Get(FpKey(0));
    if (!theirs.ok()) return theirs.error();
    // Matching the chief is the common case, and then the chief has our fingerprint.
    if (!theirs->has_value() || **theirs != digest) IMGTOOL_TRY(PublishFull(mine));
    if (options.perf.enabled) IMGTOOL_TRY(PublishPerfHost(*client, rank, options.perf));
    IMGTOOL_TRY(client->Publish(FpKey(rank), digest));
    if (options.perf.enabled) {
      Progress("perf: waiting for this worker's turn, then GEMM and allreduce");
      (void)RunPerfStep(*client, cluster, options.perf, options.timeout);
    }
    Progress("waiting for the verdict of " + chief);

    const milliseconds verdict_wait = options.timeout + kVerdictMargin;
    st = client->Wait({kVerdictKey}, verdict_wait);
    if (!st.ok()) {
      if (st.error().kind != ErrorKind::kNotFound) {
        return MakeError(st.error().kind, "lost " + chief + " before its verdict: " + st.error().message);
      }
      return ChiefMissing(workers, chief + ": no verdict within " + Secs(verdict_wait));
    }
    auto text = client->Get(kVerdictKey);
    if (!text.ok()) return text.error();
    if (!text->has_value()) return MakeError(ErrorKind::kInternal, "the verdict vanished from the store");
    (void)client->Set(AckKey(rank), "1");  // best effort: the chief stops waiting sooner
    if ((*text)->rfind(kErrorPrefix, 0) == 0) return ErrorFromWire(**text).Context(chief + " failed");
    auto v = VerdictFromWire(**text, workers);
    if (!v.ok()) return v.error().Context("the verdict of " + chief);
    IMGTOOL_TRY(CheckVerdictNamesUs(*v, rank, digest, chief));
    return v;
  }
};

}  // namespace

std::vector<WorkerId> WorkersOf(const trainer::ClusterConfig& cluster) {
  std::vector<WorkerId> out;
  for (size_t r = 0; r < cluster.tasks.size(); ++r) {
    const auto& t = cluster.tasks[r];
    out.push_back({static_cast<int>(r), t.Label(), t.address});
  }
  return out;
}

Result<Verdict> GatherVerdict(const trainer::ClusterConfig& cluster, const Fingerprint& mine,
                              const GatherOptions& options, GatherStats* stats) {
  const auto start = Clock::now();
  if (cluster.tasks.empty() || cluster.rank < 0 || cluster.rank >= static_cast<int>(cluster.tasks.size())) {
    return MakeError(ErrorKind::kInvalidInput, "fleet check: rank " + std::to_string(cluster.rank) +
                                                   " is not one of the cluster's " +
                                                   std::to_string(cluster.tasks.size()) + " tasks");
  }
  Exchange x{cluster, options, WorkersOf(cluster), FingerprintDigest(mine, options.ignore), nullptr, 0, nullptr};
  auto finish = [&](Result<Verdict> v) {
    if (stats) {
      *stats = GatherStats{};
      if (x.client) {
        stats->bytes_sent = x.client->bytes_sent();
        stats->bytes_received = x.client->bytes_received();
      }
      stats->seconds = std::chrono::duration<double>(Clock::now() - start).count();
      stats->distinct_digests = x.distinct;
    }
    return v;
  };

  if (x.workers.size() == 1) {  // nobody to compare with; --expect still applies
    CompareInput in{x.workers, {{0, x.digest}}, {{x.digest, mine}}, options.ignore, options.expected};
    x.distinct = 1;
    auto v = Compare(in);
    if (v.ok() && options.perf.enabled) v->perf = PerfAlone(options.perf);
    return finish(std::move(v));
  }

  const std::string chief = ChiefName(x.workers, cluster);
  if (cluster.rank == 0) {
    auto v = x.Serve(mine, start + options.timeout);
    auto result = finish(std::move(v));
    x.client.reset();
    return result;
  }

  auto client = trainer::TcpStoreClient::Connect(cluster.store.host, cluster.store.port, options.timeout,
                                                 trainer::StoreClaim{cluster.rank, options.token});
  // Refused (a claimed rank, the token) or not a store we can trust: an error, not a
  // missing chief.
  if (!client.ok() && client.error().kind != ErrorKind::kTransport) {
    return finish(client.error().Context("fleet check: " + x.workers[static_cast<size_t>(cluster.rank)].name));
  }
  if (!client.ok()) {
    // The cause only ("Connection refused"): the note must fit on a report line.
    const std::string& why = client.error().message;
    const size_t colon = why.rfind(": ");
    return finish(ChiefMissing(x.workers, chief + ": no answer within " + Secs(options.timeout) + " (" +
                                              (colon == std::string::npos ? why : why.substr(colon + 2)) + ")"));
  }
  x.client = std::move(*client);
  auto v = x.Worker(mine);
  return finish(std::move(v));
}

}  // namespace imgtool::fleet
