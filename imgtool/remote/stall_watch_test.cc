// StallWatch on a made-up clock: the bound counts from the last bytes, not from a
// window of curl's own.
#include "remote/stall_watch.h"

#include <gtest/gtest.h>

namespace imgtool::remote {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const StallWatch::Clock::time_point t0{};

// The first moment, after `start`, at which the watch says stalled, feeding `bytes_at`
// every `step` (as curl's progress callback does); -1 ms when never within `limit`.
template <typename F>
milliseconds FirstStall(StallWatch& w, F bytes_at, milliseconds step, milliseconds limit) {
  for (milliseconds t{0}; t <= limit; t += step) {
    if (w.Stalled(bytes_at(t), t0 + t)) return t;
  }
  return milliseconds(-1);
}

// A burst of 128 KiB, then nothing: stalled `bound` after the burst (curl's own check,
// averaging over about 5 s, waited until about 7 s for a bound of 2).
TEST(StallWatch, SilenceAfterABurstStallsAtTheBound) {
  StallWatch w(seconds(2), 1024);
  auto burst = [](milliseconds t) -> uint64_t { return t < milliseconds(100) ? 0 : 128 * 1024; };
  EXPECT_EQ(FirstStall(w, burst, milliseconds(100), seconds(30)), milliseconds(2100));
}

TEST(StallWatch, NothingAtAllStallsAtTheBound) {
  StallWatch w(seconds(60), 1024);
  EXPECT_EQ(FirstStall(
                w, [](milliseconds) { return uint64_t{0}; }, seconds(1), seconds(600)),
            seconds(60));
}

// 100 bytes a second is below 1024: cut at the bound. 2 KiB a second never is.
TEST(StallWatch, TrickleBelowTheLimitIsAStall) {
  StallWatch slow(seconds(2), 1024);
  EXPECT_EQ(FirstStall(
                slow, [](milliseconds t) { return uint64_t(t.count() / 10); }, milliseconds(500), seconds(30)),
            seconds(2));
  StallWatch fast(seconds(2), 1024);
  EXPECT_EQ(FirstStall(
                fast, [](milliseconds t) { return uint64_t(t.count() * 2); }, milliseconds(500), seconds(600)),
            milliseconds(-1));
}

// Bytes that keep coming push the stall back; it is measured from the last of them.
TEST(StallWatch, ProgressRestartsTheWindow) {
  StallWatch w(seconds(5), 1024);
  auto bursts = [](milliseconds t) -> uint64_t {
    return t < seconds(20) ? uint64_t(t.count() / 1000) * 8192 : 20 * 8192;
  };
  EXPECT_EQ(FirstStall(w, bursts, milliseconds(250), seconds(60)), seconds(25));
}

// Before the watch has run for `bound`, nothing is a stall, however many idle calls come
// (curl's, about once a second while nothing moves).
TEST(StallWatch, NothingIsAStallBeforeTheBound) {
  StallWatch w(seconds(86400), 1);
  for (int i = 0; i < 100000; ++i) EXPECT_FALSE(w.Stalled(5, t0 + milliseconds(i)));
}

}  // namespace
}  // namespace imgtool::remote
