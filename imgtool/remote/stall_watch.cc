#include "remote/stall_watch.h"

namespace imgtool::remote {

bool StallWatch::Stalled(uint64_t moved, Clock::time_point now) {
  if (!samples_.empty() && samples_.back().second == moved && samples_.size() > 1 &&
      samples_[samples_.size() - 2].second == moved) {
    samples_.back().first = now;  // a run of idle calls needs only its ends
  } else {
    samples_.emplace_back(now, moved);
  }
  const Clock::time_point window_start = now - bound_;
  while (samples_.size() > 1 && samples_[1].first <= window_start) samples_.pop_front();
  if (samples_.front().first > window_start) return false;  // not watched for `bound` yet
  return moved - samples_.front().second < min_bytes_;
}

}  // namespace imgtool::remote
