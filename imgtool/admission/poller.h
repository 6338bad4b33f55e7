// A thread that runs `tick` every `every` until destroyed (the webhook's reload of its
// policy files and TLS pair). Polling, not inotify: a Kubernetes volume swaps a symlink
// (..data) that inotify on the file does not see, and a second's delay is nothing here.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace imgtool::admission {

class Poller {
 public:
  Poller(std::chrono::milliseconds every, std::function<void()> tick)
      : thread_([this, every, tick = std::move(tick)] {
          std::unique_lock<std::mutex> lock(mu_);
          while (!cv_.wait_for(lock, every, [this] { return stop_; })) {
            lock.unlock();
            tick();
            lock.lock();
          }
        }) {}
  ~Poller() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Poller(const Poller&) = delete;
  Poller& operator=(const Poller&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;  // last: started once the members it reads exist
};

}  // namespace imgtool::admission
