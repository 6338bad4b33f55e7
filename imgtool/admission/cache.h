// A small TTL cache with single flight: the first caller of a key starts the computation
// on its own thread, every caller (including later ones while it runs) shares its
// future, and a finished value is served until its TTL passes. A value the computation
// marks not cacheable (an unreachable registry) is served to the callers already waiting
// and then forgotten, so the next request tries again.
//
// Why its own thread: a request waits with a deadline (the API server gives up after its
// timeoutSeconds) while a slow registry check carries on and fills the cache for the retry.
// Why a WorkLimit: those threads outlive the requests that started them, so a flood of
// images on a silent registry would otherwise start threads without bound. At the limit a
// new computation is not started (Get answers nullopt); the caller may wait for room.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

namespace imgtool::admission {

using Clock = std::function<std::chrono::steady_clock::time_point()>;

inline Clock SteadyClock() {
  return [] { return std::chrono::steady_clock::now(); };
}

// Computations running at once, across every cache that shares it (one per server), in
// all and per group (a registry host: one silent registry cannot take every slot).
class WorkLimit {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  WorkLimit(size_t max, size_t max_per_group) : max_(max), max_per_group_(max_per_group) {}
  bool TryAcquire(const std::string& group) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!HasRoom(group)) return false;
    ++running_;
    ++groups_[group];
    return true;
  }
  void Release(const std::string& group) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      --running_;
      if (--groups_[group] == 0) groups_.erase(group);
    }
    room_.notify_all();
  }
  // Until there is room for `group` (true) or `deadline` passes (false).
  bool WaitForRoom(const std::string& group, TimePoint deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    return room_.wait_until(lock, deadline, [&] { return HasRoom(group); });
  }
  // Until nothing runs (true) or `deadline` passes (false).
  bool WaitIdle(TimePoint deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    return room_.wait_until(lock, deadline, [&] { return running_ == 0; });
  }
  size_t running() const {
    std::lock_guard<std::mutex> lock(mu_);
    return running_;
  }
  size_t max() const { return max_; }
  size_t max_per_group() const { return max_per_group_; }

 private:
  bool HasRoom(const std::string& group) const {  // mu_ held
    auto it = groups_.find(group);
    return running_ < max_ && (it == groups_.end() || it->second < max_per_group_);
  }

  mutable std::mutex mu_;
  std::condition_variable room_;
  const size_t max_, max_per_group_;
  size_t running_ = 0;
  std::map<std::string, size_t> groups_;
};

template <typename V>
class TtlCache {
 public:
  // compute() -> {value, cacheable}
  using Compute = std::function<std::pair<V, bool>()>;

  TtlCache(std::chrono::milliseconds ttl, const Clock& clock = SteadyClock(), size_t max_entries = 10000,
           const std::shared_ptr<WorkLimit>& limit = nullptr)
      : s_(std::make_shared<State>()) {
    s_->ttl = ttl;
    s_->clock = clock;
    s_->max_entries = max_entries;
    s_->limit = limit;
  }

  // The shared value; nullopt when the key is not cached, not in flight, and the WorkLimit
  // has no room for another computation of `group`.
  std::optional<std::shared_future<V>> Get(const std::string& key, Compute compute, const std::string& group = "") {
    std::lock_guard<std::mutex> lock(s_->mu);
    auto now = s_->clock();
    auto it = s_->entries.find(key);
    if (it != s_->entries.end() && (!it->second.done || now < it->second.expires)) {
      ++s_->hits;
      return it->second.value;
    }
    if (s_->limit && !s_->limit->TryAcquire(group)) return std::nullopt;
    ++s_->misses;
    if (s_->entries.size() >= s_->max_entries) Sweep(now);
    auto promise = std::make_shared<std::promise<V>>();
    Entry& e = s_->entries[key];
    // The TTL counts from the request that started the computation.
    e = Entry{promise->get_future().share(), false, now + s_->ttl, ++s_->generation};
    auto run = [s = s_, key, group, gen = e.generation, promise, compute = std::move(compute)] {
      auto [value, cacheable] = compute();
      if (s->limit) s->limit->Release(group);
      {
        // The entry is settled before the value is published, so a caller that has the
        // value sees the cache as it will stay.
        std::lock_guard<std::mutex> l(s->mu);
        auto it = s->entries.find(key);
        if (it != s->entries.end() && it->second.generation == gen) {  // else replaced meanwhile
          if (cacheable) {
            it->second.done = true;
          } else {
            s->entries.erase(it);
          }
        }
      }
      promise->set_value(std::move(value));
    };
    try {
      std::thread(std::move(run)).detach();
    } catch (const std::system_error&) {
      // No thread to be had (the process is at its limit): nothing in flight, nothing held.
      s_->entries.erase(key);
      if (s_->limit) s_->limit->Release(group);
      return std::nullopt;
    }
    return e.value;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(s_->mu);
    return s_->entries.size();
  }
  // Gets served from an entry (cached, or in flight and shared), and gets that started a
  // computation; a Get refused for want of room counts as neither.
  uint64_t hits() const {
    std::lock_guard<std::mutex> lock(s_->mu);
    return s_->hits;
  }
  uint64_t misses() const {
    std::lock_guard<std::mutex> lock(s_->mu);
    return s_->misses;
  }

 private:
  struct Entry {
    std::shared_future<V> value;
    bool done = false;  // computed and cacheable; until then callers share the future
    std::chrono::steady_clock::time_point expires;
    uint64_t generation = 0;
  };
  // Shared with the computing threads, which may outlive the cache.
  struct State {
    mutable std::mutex mu;
    std::map<std::string, Entry> entries;
    std::chrono::milliseconds ttl{0};
    Clock clock;
    size_t max_entries = 0;
    uint64_t generation = 0;
    uint64_t hits = 0, misses = 0;
    std::shared_ptr<WorkLimit> limit;
  };

  // Drops expired entries; when every entry is fresh, drops finished ones (bounded memory).
  void Sweep(std::chrono::steady_clock::time_point now) {
    for (auto it = s_->entries.begin(); it != s_->entries.end();) {
      it = it->second.done && now >= it->second.expires ? s_->entries.erase(it) : std::next(it);
    }
    if (s_->entries.size() < s_->max_entries) return;
    for (auto it = s_->entries.begin(); it != s_->entries.end();) {
      it = it->second.done ? s_->entries.erase(it) : std::next(it);
    }
  }

  std::shared_ptr<State> s_;
};

}  // namespace imgtool::admission
