// A small TTL cache with single flight: the first caller of a key starts the computation
// on its own thread, every caller (including later ones while it runs) shares its
// future, and a finished value is served until its TTL passes. A value the computation
// marks not cacheable (an unreachable registry) is served to the callers already waiting
// and then forgotten, so the next request tries again.
//
// Why its own thread: a request waits with a deadline (the API server gives up after its
// timeoutSeconds) while a slow registry check carries on and fills the cache for the retry.
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace imgtool::admission {

using Clock = std::function<std::chrono::steady_clock::time_point()>;

inline Clock SteadyClock() {
  return [] { return std::chrono::steady_clock::now(); };
}

template <typename V>
class TtlCache {
 public:
  // compute() -> {value, cacheable}
  using Compute = std::function<std::pair<V, bool>()>;

  TtlCache(std::chrono::milliseconds ttl, Clock clock = SteadyClock(), size_t max_entries = 10000)
      : s_(std::make_shared<State>()) {
    s_->ttl = ttl;
    s_->clock = std::move(clock);
    s_->max_entries = max_entries;
  }

  std::shared_future<V> Get(const std::string& key, Compute compute) {
    std::lock_guard<std::mutex> lock(s_->mu);
    auto now = s_->clock();
    auto it = s_->entries.find(key);
    if (it != s_->entries.end() && (!it->second.done || now < it->second.expires)) return it->second.value;
    if (s_->entries.size() >= s_->max_entries) Sweep(now);
    auto promise = std::make_shared<std::promise<V>>();
    Entry& e = s_->entries[key];
    // The TTL counts from the request that started the computation.
    e = Entry{promise->get_future().share(), false, now + s_->ttl, ++s_->generation};
    std::thread([s = s_, key, gen = e.generation, promise, compute = std::move(compute)] {
      auto [value, cacheable] = compute();
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
    }).detach();
    return e.value;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(s_->mu);
    return s_->entries.size();
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
