// ThreadPool: a fixed set of threads that run ParallelFor(n, fn) with fn(i) for i in
// [0, n), statically partitioned so thread t always gets the same indices. Work items
// never share output, so results do not depend on the thread count.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace trainer {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // threads >= 1; the caller's thread is one of them
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  void ParallelFor(int n, const std::function<void(int)>& fn);

 private:
  void RunShare(int thread, int n, const std::function<void(int)>& fn) const;
  void WorkerLoop(int thread);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int)>* fn_ = nullptr;
  int n_ = 0;
  long generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

}  // namespace trainer
