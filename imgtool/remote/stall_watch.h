// When a transfer is stalled: fewer than kLowSpeedBytesPerSec bytes a second, on average
// over the last `bound` seconds (NetTimeouts::stall_s, $IMGTOOL_STALL_TIMEOUT). So a peer
// that stops sending is given up `bound` seconds after its last byte, whatever came
// before: curl's own low-speed check (CURLOPT_LOW_SPEED_TIME) averages over a window of
// its own (about 5 s), and after a burst it cut a stall only seconds past the bound.
//
// The caller feeds it the bytes moved so far (down and up) from curl's progress callback,
// which libcurl calls at least about once a second while nothing moves: a stall is
// caught within about a second of the bound. Pure: the time is a parameter, for tests.
//
// Not here: connecting (CURLOPT_CONNECTTIMEOUT), whole-request bounds.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <utility>

namespace imgtool::remote {

class StallWatch {
 public:
  using Clock = std::chrono::steady_clock;

  StallWatch(std::chrono::seconds bound, uint64_t min_bytes_per_sec)
      : bound_(bound), min_bytes_(static_cast<uint64_t>(bound.count()) * min_bytes_per_sec) {}

  // `moved`: bytes moved so far at `now` (never less than before). The first call starts
  // the watch. True once fewer than the minimum moved in the last `bound`.
  bool Stalled(uint64_t moved, Clock::time_point now);

 private:
  std::chrono::seconds bound_;
  uint64_t min_bytes_;
  // (time, bytes moved by then), oldest first; the front is the newest at or before
  // now - bound once the watch has run that long.
  std::deque<std::pair<Clock::time_point, uint64_t>> samples_;
};

}  // namespace imgtool::remote
