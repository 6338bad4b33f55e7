// Waiting for GPU work that contains collectives, with a deadline. A blocking
// cudaEventSynchronize never returns when a peer dies inside an NCCL collective: the
// kernel waits for data that never comes. So the host polls instead: the work's event,
// the communicator's asynchronous error, and the clock (--collective-timeout); on an error
// or at the deadline it aborts the communicator, which ends the stuck kernel, and fails.
// The CUDA and NCCL calls come in as functions (step_cuda.cc passes cudaEventQuery,
// ncclCommGetAsyncError and ncclCommAbort), so the logic is tested with fakes; this file
// includes no CUDA header.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "core/result.h"

namespace trainer::cuda {

struct WaitHooks {
  // Has the work finished? (cudaEventQuery / cudaStreamQuery: true on cudaSuccess, false on
  // cudaErrorNotReady; an Error when the work failed on the device.)
  std::function<Result<bool>()> done;
  // The communicator's asynchronous error (ncclCommGetAsyncError, with ncclGetLastError's
  // text, which names the peer when NCCL knows it); empty: no communicator.
  std::function<Status()> comm_error;
  // Ends every outstanding collective (ncclCommAbort); empty: no communicator.
  std::function<void()> abort;
};

// Polls `hooks` until the work is done (Ok), fails, or `timeout` passes
// (milliseconds::max(): never). On a failure or
// the timeout it calls abort once, then returns:
//  - comm_error's Error, with "<what>: " before it;
//  - done's Error, likewise;
//  - kTransport (trainer exit 6) "<what>: not finished after N s (--collective-timeout); a peer
//    failed or left the job (NCCL aborted; restart all tasks to resume)".
// Between polls it yields, then sleeps up to 1 ms: a long wait costs no core, a short one
// (a step of tens of microseconds) little latency.
Status WaitWithDeadline(const WaitHooks& hooks, std::chrono::milliseconds timeout, const std::string& what);

}  // namespace trainer::cuda
