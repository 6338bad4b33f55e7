// CoreBudget: the cores that concurrent DigestLayer calls may take for helper threads,
// beyond the threads their callers already run on. verify reads layers on as many threads
// as there are cores (biggest first); a core left over at the start, or freed when a
// thread runs out of layers, lets one layer still being read continue on a pipeline of
// three threads (digest_pipeline.h), so the two levels share the cores rather than
// multiply their threads. Without a budget (or with none spare) a digest stays on its
// caller's thread, as on one core.
#pragma once

#include <atomic>

namespace imgtool::archive {

class CoreBudget {
 public:
  explicit CoreBudget(int spare) : spare_(spare) {}
  CoreBudget(const CoreBudget&) = delete;
  CoreBudget& operator=(const CoreBudget&) = delete;

  // Takes a spare core if there is one.
  bool TryTake() {
    int s = spare_.load(std::memory_order_relaxed);
    while (s > 0) {
      if (spare_.compare_exchange_weak(s, s - 1, std::memory_order_acq_rel)) return true;
    }
    return false;
  }
  // A core taken is handed back, or a caller's thread has no more work.
  void Give() { spare_.fetch_add(1, std::memory_order_acq_rel); }
  int spare() const { return spare_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int> spare_;
};

}  // namespace imgtool::archive
