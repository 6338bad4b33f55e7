// The GEMM and the allreduce of the perf preflight (perf_measure.h).
#include "fleet/perf_measure.h"

#include <gloo/allreduce_ring_chunked.h>
#include <gloo/context.h>
#include <gloo/transport/context.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <vector>

#include "cpu/ops.h"
#include "fleet/perf_verdict.h"

namespace imgtool::fleet {

namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A Gloo context whose only pairs are the ring's: left (rank-1) and right (rank+1), one
// pair when they are the same peer. Gloo's rendezvous context would pair every rank with
// every other (N addresses stored and read per rank); the ring algorithms need two.
class RingContext : public gloo::Context {
 public:
  RingContext(int rank, int size, std::shared_ptr<gloo::transport::Device> device, std::chrono::milliseconds timeout)
      : gloo::Context(rank, size) {
    device_ = std::move(device);
    transportContext_ = device_->createContext(rank, size);
    setTimeout(timeout);
    transportContext_->setTimeout(timeout);
  }
  gloo::transport::Context& transport() { return *transportContext_; }
};

std::string RingKey(int rank) { return "perfring/" + std::to_string(rank); }

Result<std::string> Read(trainer::TcpStoreClient& store, const std::string& key) {
  auto v = store.Get(key);
  if (!v.ok()) return v.error();
  if (!v->has_value()) return MakeError(ErrorKind::kInternal, key + " vanished from the store");
  return **v;
}

// Pairs this rank with its ring neighbours through the store.
Status ConnectRing(RingContext& ctx, trainer::TcpStoreClient& store, const AllreduceOptions& options) {
  const int rank = ctx.rank, size = ctx.size;
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  auto& to_left = ctx.transport().createPair(left);
  const std::vector<char> left_addr = to_left->address().bytes();
  const std::vector<char> right_addr = right != left ? ctx.transport().createPair(right)->address().bytes() : left_addr;
  IMGTOOL_TRY(store.Set(RingKey(rank), RingRecordToWire(left_addr, right_addr)));
  IMGTOOL_TRY(store.Wait({RingKey(left), RingKey(right)}, options.timeout));
  // A pair's connect blocks until its peer connects too, so pairs are connected in one
  // global order (by peer rank, as Gloo's full mesh does): with left then right, every
  // rank of a ring of 3+ could wait on its left while its left waits on its own left.
  // Entry 1 of the left peer's record is its pair for its right (us), entry 0 of the right one's its left.
  std::vector<std::pair<int, int>> peers = {{left, 1}};
  if (right != left) peers.emplace_back(right, 0);
  std::sort(peers.begin(), peers.end());
  for (const auto& [peer, entry] : peers) {
    auto record = Read(store, RingKey(peer));
    if (!record.ok()) return record.error();
    auto addr = RingRecordEntry(*record, entry);
    if (!addr.ok()) return addr.error().Context(RingKey(peer));
    ctx.transport().getPair(peer)->connect(*addr);
  }
  return Status::Ok();
}

// The timed iterations on a connected ring; Gloo's exceptions become errors here, so the
// caller always reaches LeaveRing.
Result<AllreduceResult> RunAllreduce(const std::shared_ptr<RingContext>& ctx, size_t count,
                                     const AllreduceOptions& options) {
  std::vector<float> buf(count);
  const int rank = ctx->rank, size = ctx->size;
  // Every rank holds rank+1: the sum n(n+1)/2 is exact in float for any job size we run.
  const float expected = static_cast<float>(static_cast<double>(size) * (size + 1) / 2);
  try {
    std::shared_ptr<gloo::Context> base = ctx;
    gloo::AllreduceRingChunked<float> allreduce(base, {buf.data()}, static_cast<int>(count));
    double timed = 0;
    for (int i = 0; i < options.warmup + options.iterations; ++i) {
      std::fill(buf.begin(), buf.end(), static_cast<float>(rank + 1));
      const auto t = Clock::now();
      allreduce.run();
      if (i >= options.warmup) timed += Since(t);
      const size_t wrong =
          static_cast<size_t>(std::count_if(buf.begin(), buf.end(), [&](float x) { return x != expected; }));
      if (wrong != 0) {
        return MakeError(ErrorKind::kIntegrity, "allreduce: " + std::to_string(wrong) + " of " + std::to_string(count) +
                                                    " sums wrong (iteration " + std::to_string(i) + ")");
      }
    }
    AllreduceResult r;
    r.seconds = timed / options.iterations;
    r.algbw_gbps = static_cast<double>(count * sizeof(float)) / r.seconds / 1e9;
    r.busbw_gbps = r.algbw_gbps * 2.0 * (size - 1) / size;
    return r;
  } catch (const std::exception& e) {
    return MakeError(ErrorKind::kTransport, std::string("allreduce over Gloo: ") + e.what());
  }
}

std::string LeftKey(int rank) { return "perfleft/" + std::to_string(rank); }

// A rank returns from its last allreduce as soon as its own sums are complete, while a
// slower neighbour may still be reading the last chunk this rank sent: closing the pairs
// then fails that neighbour with "Connection closed by peer" (seen on a loaded machine).
// So each rank says it is leaving, whatever its outcome, and keeps its pairs open until
// both neighbours have said so too (bounded by the timeout; a neighbour that died is
// already an error on its own side).
void LeaveRing(trainer::TcpStoreClient& store, int rank, int size, std::chrono::milliseconds timeout) {
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  if (!store.Set(LeftKey(rank), "left").ok()) return;
  (void)store.Wait({LeftKey(left), LeftKey(right)}, timeout);
}

}  // namespace

GemmResult TimeGemm(const GemmOptions& o) {
  // Deterministic inputs in [-1, 1): the values do not change the time, only denormals
  // would, and there are none.
  std::vector<float> in(static_cast<size_t>(o.m) * o.k), w(static_cast<size_t>(o.k) * o.n), b(o.n),
      out(static_cast<size_t>(o.m) * o.n);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 251) / 125.5f - 1.0f;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 241) / 120.5f - 1.0f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.5f;
  const double flops = 2.0 * o.m * o.n * o.k;
  GemmResult r;
  const auto start = Clock::now();
  double best = 0;
  while (r.reps < o.max_reps && (r.reps < o.min_reps || Clock::now() - start < o.budget)) {
    const auto t = Clock::now();
    trainer::cpu::linear_forward(out.data(), in.data(), w.data(), b.data(), o.m, o.k, o.n);
    const double s = Since(t);
    if (s > 0) best = std::max(best, flops / s);
    ++r.reps;
  }
  r.seconds = Since(start);
  r.gflops = best / 1e9;
  return r;
}

Result<AllreduceResult> TimeAllreduce(trainer::TcpStoreClient& store, int rank, int size, const std::string& self_host,
                                      const AllreduceOptions& options) {
  const size_t count = options.bytes / sizeof(float);
  if (size < 2 || count == 0 || options.iterations < 1) {
    return MakeError(ErrorKind::kInvalidInput, "allreduce: needs 2+ ranks, some bytes and an iteration");
  }
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = self_host;
    auto ctx = std::make_shared<RingContext>(rank, size, gloo::transport::tcp::CreateDevice(attr), options.timeout);
    if (auto st = ConnectRing(*ctx, store, options); !st.ok()) {
      (void)store.Set(LeftKey(rank), "left");  // so no neighbour waits on us in LeaveRing
      return st.error();
    }
    auto result = RunAllreduce(ctx, count, options);
    LeaveRing(store, rank, size, options.timeout);  // before ctx closes the pairs
    return result;
  } catch (const std::exception& e) {
    return MakeError(ErrorKind::kTransport, std::string("allreduce over Gloo: ") + e.what());
  }
}

}  // namespace imgtool::fleet
