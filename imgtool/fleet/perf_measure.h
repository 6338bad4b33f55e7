// The two measurements of `fleet check --perf`, each with the trainer's own code:
//   - a GEMM with the trainer's CPU matmul (trainer/cpu/ops.h linear_forward, the op of
//     every training step), a fixed shape so every worker does the same work, repeated
//     until a time budget is spent (at least min_reps), reported as the best repetition's
//     2*M*N*K / s. The CUDA path (cuBLAS, through the trainer's CUDA plugin) is not done:
//     no GPU where this was written; a GPU node is timed on its CPU.
//   - an allreduce over Gloo, the trainer's CPU transport (trainer/cluster/gloo_group.h),
//     connected through the check's own rendezvous store as a ring: each rank pairs only
//     with its two neighbours (Gloo's bandwidth-optimal AllreduceRingChunked needs no
//     more), so each worker stores one address record and reads two, whatever the fleet's
//     size. Reported as nccl-tests' busbw: algbw = bytes / time per iteration, busbw =
//     algbw * 2(n-1)/n. Inputs are exact small integers, so the sum is checked exactly
//     (nccl-tests' #wrong): a wrong sum is an error, not a figure. NCCL is not done here.
#pragma once

#include <chrono>
#include <string>

#include "cluster/tcp_store.h"
#include "core/result.h"

namespace imgtool::fleet {

struct GemmOptions {
  // out (M, N) = in (M, K) @ w (K, N) + b: the trainer's layer shape, scaled up so one
  // repetition is ~10-60 ms on a server core (longer than a CFS slice, so a CPU quota or
  // a busy neighbour shows in every repetition).
  int m = 512, k = 1024, n = 512;
  std::chrono::milliseconds budget{200};  // repeat until this is spent...
  int min_reps = 3;                       // ...but at least this often
  int max_reps = 20;
};

struct GemmResult {
  double gflops = 0;  // best repetition
  int reps = 0;
  double seconds = 0;  // all repetitions together
};

GemmResult TimeGemm(const GemmOptions& options);

struct AllreduceOptions {
  size_t bytes = 4u << 20;  // floats allreduced per iteration
  int warmup = 1;           // untimed; the first is also the barrier after every GEMM
  int iterations = 5;
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};  // connecting, and each collective
};

struct AllreduceResult {
  double algbw_gbps = 0;  // bytes / seconds per iteration, 1e9 bytes/s
  double busbw_gbps = 0;  // algbw * 2(n-1)/n
  double seconds = 0;     // per iteration, the timed ones' mean
};

// Collective: every rank of `size` calls it with its store connection (claimed as `rank`)
// and the address to bind Gloo to. Keys: "perfring/<rank>" (this rank's two Gloo pair
// addresses), "perfleft/<rank>" (done with the ring: its neighbours may close their
// pairs). Errors: kTransport (Gloo could not connect or a peer failed), kIntegrity (a
// wrong sum), the store's own.
Result<AllreduceResult> TimeAllreduce(trainer::TcpStoreClient& store, int rank, int size, const std::string& self_host,
                                      const AllreduceOptions& options);

}  // namespace imgtool::fleet
