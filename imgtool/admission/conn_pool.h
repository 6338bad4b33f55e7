// Threads for the server's connections: each connection is served by a thread of its own
// (cpp-httplib's model: a thread reads, answers and waits on one kept-alive connection),
// up to a cap on connections. A fixed pool queued a connection behind every busy one, so
// 64 slow clients starved the API server and /healthz; here a connection never waits for
// a thread, and the cap (with the read deadlines of conn_watchdog.h) bounds what slow
// clients can hold. `warm` threads are started at once and kept; threads beyond them end
// after a while idle.
//
// Not here: sockets or HTTP (server.cc hands tasks in; the watchdog cuts slow sockets).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace imgtool::admission {

class ConnectionPool {
 public:
  ConnectionPool(size_t warm, size_t max, std::chrono::milliseconds idle_exit = std::chrono::seconds(30));
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // Runs `task` on an idle thread, or a new one; false (the task not taken) when `max`
  // tasks are running or about to, or after Shutdown.
  bool Run(const std::function<void()>& task);
  // Lets the tasks taken finish, then joins every thread.
  void Shutdown();

  size_t running() const;  // tasks taken and not finished
  size_t threads() const;

 private:
  void Work();
  void Spawn();  // mu_ held
  void Reap();   // mu_ held: joins threads that ended

  const size_t warm_, max_;
  const std::chrono::milliseconds idle_exit_;
  mutable std::mutex mu_;
  std::condition_variable work_;   // a task queued, or stopping
  std::condition_variable ended_;  // a thread ended
  std::deque<std::function<void()>> tasks_;
  size_t busy_ = 0, idle_ = 0, live_ = 0;
  bool stop_ = false;
  std::map<std::thread::id, std::thread> threads_;
  std::vector<std::thread::id> ended_ids_;
};

}  // namespace imgtool::admission
