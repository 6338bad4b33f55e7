// WaitWithDeadline with fakes for cudaEventQuery, ncclCommGetAsyncError and ncclCommAbort:
// a step that never completes (a dead peer) fails with the collective-timeout error soon
// after the deadline, NCCL aborted once; an asynchronous error fails at once. No GPU.
#include "cuda/collective_wait.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace trainer::cuda {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

struct Fake {
  int polls = 0;         // calls of done
  int done_after = -1;   // done from this poll on; -1: never
  int error_after = -1;  // comm_error fails from this poll on; -1: never
  int aborts = 0;

  WaitHooks Hooks() {
    WaitHooks h;
    h.done = [this]() -> Result<bool> {
      ++polls;
      return done_after >= 0 && polls >= done_after;
    };
    h.comm_error = [this]() -> Status {
      if (error_after >= 0 && polls + 1 >= error_after) {
        return MakeError(ErrorKind::kTransport,
                         "ncclCommGetAsyncError: remote process exited or there was a network "
                         "error (peer 10.0.0.2<41234>)");
      }
      return Status::Ok();
    };
    h.abort = [this] { ++aborts; };
    return h;
  }
};

double SecondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

TEST(CollectiveWait, DoneAtOnce) {
  Fake f;
  f.done_after = 1;
  Status s = WaitWithDeadline(f.Hooks(), milliseconds(100), "waiting for the step");
  EXPECT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(f.polls, 1);
  EXPECT_EQ(f.aborts, 0);
}

TEST(CollectiveWait, DoneAfterPolling) {
  Fake f;
  f.done_after = 50;
  Status s = WaitWithDeadline(f.Hooks(), milliseconds(60000), "waiting for the step");
  EXPECT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(f.polls, 50);
  EXPECT_EQ(f.aborts, 0);
}

// A dead peer: the event never completes. The wait ends at the deadline, not forever, with
// the error the trainer exits with (kTransport: exit 6), NCCL aborted once.
TEST(CollectiveWait, NeverDoneTimesOut) {
  Fake f;
  const auto start = Clock::now();
  Status s = WaitWithDeadline(f.Hooks(), milliseconds(300), "waiting for the step");
  const double took = SecondsSince(start);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::kTransport);
  EXPECT_EQ(ExitCodeFor(s.error().kind), 6);
  EXPECT_EQ(s.error().message,
            "waiting for the step: not finished after 0.3 s (--collective-timeout); a peer failed or left the job "
            "(NCCL aborted; restart all tasks to resume)");
  EXPECT_EQ(f.aborts, 1);
  EXPECT_GE(took, 0.3);
  EXPECT_LT(took, 0.6) << "2x the deadline";
  EXPECT_GT(f.polls, 1);
  EXPECT_LT(f.polls, 100000) << "it backs off rather than spinning";
}

TEST(CollectiveWait, WholeSecondsInTheMessage) {
  Fake f;
  Status s = WaitWithDeadline(f.Hooks(), milliseconds(1000), "copying the state to the host");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("copying the state to the host: not finished after 1 s (--collective-timeout)"),
            std::string::npos)
      << s.error().message;
}

// NCCL reports the peer's failure: the wait fails at once (a deadline of an hour would
// hang this test), with NCCL's text naming the peer, and aborts.
TEST(CollectiveWait, AsyncErrorFailsAtOnce) {
  Fake f;
  f.error_after = 3;
  const auto start = Clock::now();
  Status s = WaitWithDeadline(f.Hooks(), milliseconds(3600 * 1000), "waiting for the step");
  ASSERT_FALSE(s.ok());
  EXPECT_LT(SecondsSince(start), 10.0);
  EXPECT_EQ(f.polls, 2);
  EXPECT_EQ(f.aborts, 1);
  EXPECT_EQ(ExitCodeFor(s.error().kind), 6);
  EXPECT_EQ(s.error().message,
            "waiting for the step: ncclCommGetAsyncError: remote process exited or there was a network error (peer "
            "10.0.0.2<41234>)");
}

// An error NCCL reports is not hidden by an event that completed anyway.
TEST(CollectiveWait, AsyncErrorBeatsDone) {
  Fake f;
  f.done_after = 1;
  f.error_after = 1;
  Status s = WaitWithDeadline(f.Hooks(), milliseconds(1000), "waiting for the step");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(f.aborts, 1);
}

// The step itself failed on the device (a kernel fault): that error, NCCL aborted so the
// peers' collectives end too.
TEST(CollectiveWait, DeviceErrorAborts) {
  Fake f;
  WaitHooks h = f.Hooks();
  h.done = []() -> Result<bool> {
    return MakeError(ErrorKind::kInternal, "cudaEventQuery(event): an illegal memory access was encountered");
  };
  Status s = WaitWithDeadline(h, milliseconds(1000), "waiting for the step");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::kInternal);
  EXPECT_EQ(s.error().message, "waiting for the step: cudaEventQuery(event): an illegal memory access was encountered");
  EXPECT_EQ(f.aborts, 1);
}

// One rank, no communicator: no deadline (milliseconds::max() must not wrap into the past).
TEST(CollectiveWait, NoCommunicatorNoDeadline) {
  int polls = 0;
  WaitHooks h;
  h.done = [&polls]() -> Result<bool> { return ++polls >= 20; };
  Status s = WaitWithDeadline(h, milliseconds::max(), "waiting for the step");
  EXPECT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(polls, 20);
}

}  // namespace
}  // namespace trainer::cuda
