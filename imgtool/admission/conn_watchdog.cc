#include "admission/conn_watchdog.h"

#include <sys/socket.h>

#include <algorithm>

namespace imgtool::admission {

namespace {
constexpr auto kNever = ConnectionWatchdog::TimePoint::max();
}

ConnectionWatchdog::ConnectionWatchdog(std::function<void(const std::string&)> log, std::chrono::milliseconds log_every)
    : log_(std::move(log)),
      log_every_(log_every),
      last_log_(std::chrono::steady_clock::now()),
      thread_([this] { Loop(); }) {}

ConnectionWatchdog::~ConnectionWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ConnectionWatchdog::Register(const void* key, int fd, TimePoint deadline) {
  std::lock_guard<std::mutex> lock(mu_);
  if (conns_.emplace(key, Conn{fd, deadline}).second) WakeBy(deadline);
}

void ConnectionWatchdog::Rearm(const void* key, TimePoint deadline) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = conns_.find(key);
  if (it == conns_.end()) return;
  it->second.deadline = deadline;
  WakeBy(deadline);
}

void ConnectionWatchdog::WakeBy(TimePoint deadline) {
  // Every answer rearms its connection: waking the loop each time cost a context switch
  // per review. A later deadline than the next wake needs none (a removed one neither:
  // that wake finds nothing to cut).
  if (deadline >= next_wake_) return;
  next_wake_ = deadline;
  wake_.notify_all();
}

void ConnectionWatchdog::Disarm(const void* key) { Rearm(key, kNever); }

void ConnectionWatchdog::Forget(const void* key) {
  std::lock_guard<std::mutex> lock(mu_);
  conns_.erase(key);
}

void ConnectionWatchdog::CountRefused() {
  std::lock_guard<std::mutex> lock(mu_);
  ++refused_;
}

size_t ConnectionWatchdog::cut() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cut_;
}

size_t ConnectionWatchdog::refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}

size_t ConnectionWatchdog::watched() const {
  std::lock_guard<std::mutex> lock(mu_);
  return conns_.size();
}

void ConnectionWatchdog::CutExpired(TimePoint now) {
  for (auto& [key, c] : conns_) {
    if (c.deadline > now) continue;
    // Under mu_, so Forget (and then the close) waits: the descriptor is still this connection's.
    ::shutdown(c.fd, SHUT_RDWR);
    c.deadline = kNever;
    ++cut_;
  }
}

std::string ConnectionWatchdog::LogLine(TimePoint now) {
  if (!log_ || now - last_log_ < log_every_) return "";
  last_log_ = now;
  if (cut_ == cut_logged_ && refused_ == refused_logged_) return "";
  std::string line = "slow clients: " + std::to_string(cut_ - cut_logged_) +
                     " connection(s) cut (no whole request by the read deadline), " +
                     std::to_string(refused_ - refused_logged_) + " refused (at the connection cap)";
  cut_logged_ = cut_;
  refused_logged_ = refused_;
  return line;
}

void ConnectionWatchdog::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    auto now = std::chrono::steady_clock::now();
    CutExpired(now);
    if (auto line = LogLine(now); !line.empty()) {
      lock.unlock();  // the log may block; registrations must not wait on it
      log_(line);
      lock.lock();
      continue;
    }
    next_wake_ = last_log_ + log_every_;
    for (const auto& [key, c] : conns_) next_wake_ = std::min(next_wake_, c.deadline);
    wake_.wait_until(lock, next_wake_);
  }
}

}  // namespace imgtool::admission
