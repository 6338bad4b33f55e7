// The bytes the store's server holds for its peers, counted against
// StoreLimits::max_held_bytes, and the stored values that carry their share of it.
// Internal to trainer/cluster.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

namespace trainer {

// Charged per stored key on top of its bytes: its map node and shared_ptr control block.
constexpr uint64_t kStoreEntryOverhead = 128;

// Take before allocating, Give after freeing; safe from any thread.
class StoreBudget {
 public:
  explicit StoreBudget(uint64_t limit) : limit_(limit) {}
  bool Take(uint64_t n) {
    uint64_t used = used_.load();
    do {
      if (n > limit_ || used > limit_ - n) return false;
    } while (!used_.compare_exchange_weak(used, used + n));
    uint64_t peak = peak_.load();
    while (used + n > peak && !peak_.compare_exchange_weak(peak, used + n)) {
    }
    return true;
  }
  void Give(uint64_t n) { used_ -= n; }
  uint64_t used() const { return used_; }
  uint64_t peak() const { return peak_; }
  uint64_t limit() const { return limit_; }

 private:
  const uint64_t limit_;
  std::atomic<uint64_t> used_{0}, peak_{0};
};

// A stored value. A GET writes it out without copying, holding a reference, so the bytes
// stay counted until that reply is sent, whatever happens to the store meanwhile.
struct StoreEntry {
  StoreEntry(std::string v, uint32_t w, StoreBudget* b, uint64_t n)
      : value(std::move(v)), writer(w), budget(b), charged(n) {}
  ~StoreEntry() { budget->Give(charged); }
  StoreEntry(const StoreEntry&) = delete;
  StoreEntry& operator=(const StoreEntry&) = delete;
  std::string value;
  uint32_t writer;  // the rank whose connection stored it
  StoreBudget* budget;
  uint64_t charged;
};

}  // namespace trainer
