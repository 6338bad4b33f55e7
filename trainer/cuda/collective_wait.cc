#include "cuda/collective_wait.h"

#include <algorithm>
#include <thread>

namespace trainer::cuda {
namespace {

using Clock = std::chrono::steady_clock;

// Yield for the first 200 us (a step's own length), then back off to 1 ms sleeps.
void Pause(Clock::time_point started, std::chrono::microseconds& nap) {
  if (Clock::now() - started < std::chrono::microseconds(200)) {
    std::this_thread::yield();
    return;
  }
  std::this_thread::sleep_for(nap);
  nap = std::min(nap * 2, std::chrono::microseconds(1000));
}

Error Aborted(const WaitHooks& hooks, const Error& e, const std::string& what) {
  if (hooks.abort) hooks.abort();
  return e.Context(what);
}

std::string Seconds(std::chrono::milliseconds t) {
  const auto ms = t.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) : std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100);
}

}  // namespace

Status WaitWithDeadline(const WaitHooks& hooks, std::chrono::milliseconds timeout, const std::string& what) {
  const auto started = Clock::now();
  // Saturated: milliseconds::max() (no communicator, nothing to time out) must not wrap.
  const auto deadline =
      timeout >= std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - started)
          ? Clock::time_point::max()
          : started + timeout;
  auto nap = std::chrono::microseconds(10);
  for (;;) {
    // The communicator first: an error NCCL reports is never hidden by an event that fired.
    if (hooks.comm_error) {
      Status comm = hooks.comm_error();
      if (!comm.ok()) return Aborted(hooks, comm.error(), what);
    }
    Result<bool> done = hooks.done();
    if (!done.ok()) return Aborted(hooks, done.error(), what);
    if (*done) return Status::Ok();
    if (Clock::now() >= deadline) {
      return Aborted(hooks,
                     MakeError(ErrorKind::kTransport, "not finished after " + Seconds(timeout) +
                                                          " s (--collective-timeout); a peer failed or left the "
                                                          "job (NCCL aborted; restart all tasks to resume)"),
                     what);
    }
    Pause(started, nap);
  }
}

}  // namespace trainer::cuda
