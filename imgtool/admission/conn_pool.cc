#include "admission/conn_pool.h"

#include <system_error>

namespace imgtool::admission {

ConnectionPool::ConnectionPool(size_t warm, size_t max, std::chrono::milliseconds idle_exit)
    : warm_(warm), max_(max < 1 ? 1 : max), idle_exit_(idle_exit) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < warm_ && i < max_; ++i) Spawn();
}

ConnectionPool::~ConnectionPool() { Shutdown(); }

void ConnectionPool::Spawn() {
  std::thread t([this] { Work(); });
  auto id = t.get_id();
  threads_.emplace(id, std::move(t));
  // Idle from the start: a thread still starting will take a queued task, so Run must
  // not start another for it.
  ++live_;
  ++idle_;
}

void ConnectionPool::Reap() {
  for (auto id : ended_ids_) {
    auto it = threads_.find(id);
    if (it == threads_.end()) continue;
    it->second.join();  // it has left Work() and only unwinds
    threads_.erase(it);
  }
  ended_ids_.clear();
}

bool ConnectionPool::Run(const std::function<void()>& task) {
  std::lock_guard<std::mutex> lock(mu_);
  Reap();
  if (stop_ || busy_ + tasks_.size() >= max_) return false;
  tasks_.push_back(task);
  // Every idle thread takes one queued task; a task beyond them gets a thread of its own.
  if (idle_ >= tasks_.size()) {
    work_.notify_one();
    return true;
  }
  try {
    Spawn();
  } catch (const std::system_error&) {
    // No thread to be had: refuse, unless an idle one will get to it.
    if (idle_ == 0) {
      tasks_.pop_back();
      return false;
    }
    work_.notify_one();
  }
  return true;
}

void ConnectionPool::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {  // counted in idle_ here
    bool woken = work_.wait_for(lock, idle_exit_, [this] { return stop_ || !tasks_.empty(); });
    if (tasks_.empty()) {
      if (stop_ || (!woken && live_ > warm_)) break;
      continue;
    }
    auto task = std::move(tasks_.front());
    tasks_.pop_front();
    --idle_;
    ++busy_;
    lock.unlock();
    task();
    lock.lock();
    --busy_;
    ++idle_;
  }
  --idle_;
  --live_;
  ended_ids_.push_back(std::this_thread::get_id());
  ended_.notify_all();
}

void ConnectionPool::Shutdown() {
  std::unique_lock<std::mutex> lock(mu_);
  stop_ = true;
  work_.notify_all();
  // Queued tasks are still taken: a thread stops only when none is left.
  ended_.wait(lock, [this] { return live_ == 0; });
  Reap();
}

size_t ConnectionPool::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return busy_ + tasks_.size();
}

size_t ConnectionPool::threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_;
}

}  // namespace imgtool::admission
