// NcclComm: the Comm interface (comm/comm.h) over NCCL, for ranks that each own a GPU.
// Its pointers are DEVICE pointers, and each call only enqueues the collective on the
// backend's stream (it completes in stream order; a CUDA graph may capture it).
//
// Bootstrap: rank 0 creates the ncclUniqueId and the trainer's own host Comm (Gloo, over
// the rendezvous every rank already joined) broadcasts it; no other address or store.
// Like the Gloo engine it is used for allgather only: the step sums the gathered pieces in
// its fixed tree, so no result depends on NCCL's algorithm or protocol (NCCL_ALGO,
// NCCL_PROTO only change speed).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <memory>

#include "comm/comm.h"
#include "core/result.h"

namespace trainer::cuda {

class NcclComm : public Comm {
 public:
  // Collective over `host`'s ranks; the calling thread's current device is this rank's.
  static Result<std::unique_ptr<NcclComm>> Create(Comm& host, cudaStream_t stream);
  ~NcclComm() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // out (size, count) = every rank's in (count), device memory; in place when in is
  // out + rank * count.
  Status AllGather(const float* in, float* out, size_t count) override;
  // root's bytes (device memory) to every rank.
  Status Broadcast(void* data, size_t bytes, int root) override;

  // ncclCommGetAsyncError: Ok, or the error NCCL recorded while a collective ran (a peer
  // gone, a network failure), with ncclGetLastError's text, which names the peer when NCCL
  // knows it. Polled by the step's waits (cuda/collective_wait.h).
  Status AsyncError();
  // ncclCommAbort: ends every outstanding collective, so the stream drains; every later
  // call fails. For a wait that timed out or saw an error.
  void Abort();

 private:
  NcclComm(ncclComm_t comm, int rank, int size, cudaStream_t stream)
      : comm_(comm), rank_(rank), size_(size), stream_(stream) {}
  Status Alive() const;  // kTransport once aborted
  ncclComm_t comm_;      // nullptr once aborted
  int rank_, size_;
  cudaStream_t stream_;
};

}  // namespace trainer::cuda
