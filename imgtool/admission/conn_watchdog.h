// Deadlines for connections, so a slow client cannot hold a thread: cpp-httplib's read
// timeout is per read, so a client that sends a byte every 2 s never meets it, in the TLS
// handshake or in the request. Each registered connection has a deadline for what it
// owes (the handshake and a whole request; after an answer, the next request); when it
// passes, the socket is shut down both ways, which wakes the thread blocked reading it,
// and the server closes it. While a request is being answered there is no deadline (the
// review's own deadline bounds that).
//
// Keys are opaque (the server's SSL*). Forget must come before the descriptor is closed:
// after it, the number may name another connection.
//
// Not here: TLS or HTTP (server.cc registers connections from OpenSSL's callbacks).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

namespace imgtool::admission {

class ConnectionWatchdog {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  // `log` gets one line per `log_every` with the connections cut and refused meanwhile.
  explicit ConnectionWatchdog(std::function<void(const std::string&)> log = nullptr,
                              std::chrono::milliseconds log_every = std::chrono::seconds(10));
  ~ConnectionWatchdog();
  ConnectionWatchdog(const ConnectionWatchdog&) = delete;
  ConnectionWatchdog& operator=(const ConnectionWatchdog&) = delete;

  void Register(const void* key, int fd, TimePoint deadline);  // a key already known keeps its own
  void Rearm(const void* key, TimePoint deadline);             // known keys only
  void Disarm(const void* key);                                // no deadline until Rearm
  void Forget(const void* key);
  void CountRefused();  // a connection over the cap (server.cc), for the log line

  size_t cut() const;
  size_t refused() const;
  size_t watched() const;

 private:
  struct Conn {
    int fd;
    TimePoint deadline;  // max(): none
  };
  void Loop();
  void CutExpired(TimePoint now);      // mu_ held
  void WakeBy(TimePoint deadline);     // mu_ held
  std::string LogLine(TimePoint now);  // mu_ held; empty: nothing to say yet

  std::function<void(const std::string&)> log_;
  const std::chrono::milliseconds log_every_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::unordered_map<const void*, Conn> conns_;
  size_t cut_ = 0, refused_ = 0, cut_logged_ = 0, refused_logged_ = 0;
  TimePoint last_log_;
  TimePoint next_wake_ = TimePoint::min();  // when the loop wakes next; min(): it is awake
  bool stop_ = false;
  std::thread thread_;  // last: started once the rest is set
};

}  // namespace imgtool::admission
