// Test helper: a scripted HTTP/1.1 server on 127.0.0.1 with a port of its own, for the
// registry client's tests (real libcurl, real sockets). One request per connection. A
// Handler returns the whole answer; a RawHandler gets the connection itself, to answer
// slowly or never (until the client leaves or the server stops).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

namespace imgtool::remote {

class FakeServer {
 public:
  using Handler = std::function<std::string(const std::string& line, const std::string& request)>;
  using RawHandler = std::function<void(int fd, const std::string& line, const std::string& request)>;

  explicit FakeServer(Handler h)
      : FakeServer(RawHandler([h = std::move(h)](int fd, const std::string& line, const std::string& request) {
          std::string resp = h(line, request);
          (void)!::send(fd, resp.data(), resp.size(), MSG_NOSIGNAL);
        })) {}
  explicit FakeServer(RawHandler h) : handler_(std::move(h)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) std::abort();  // loopback, port 0: cannot fail
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ::listen(fd_, 16);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
  bool stopping() const { return stop_; }

  // For a RawHandler: waits until the client closes the connection (or the server
  // stops), sending nothing: a peer that accepted and then stalled.
  void HoldUntilClientLeaves(int fd) const {
    char buf[512];
    while (!stop_) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) > 0 && ::read(fd, buf, sizeof buf) <= 0) return;
    }
  }

 private:
  void Serve() {
    while (!stop_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string req = ReadRequest(c);
      // A TLS ClientHello (the https probe) is not HTTP: just close.
      if (!req.empty() && std::isalpha(static_cast<unsigned char>(req[0]))) {
        handler_(c, req.substr(0, req.find(" HTTP/")), req);
      }
      ::close(c);
    }
  }

  static std::string ReadRequest(int c) {
    std::string req;
    char buf[4096];
    while (req.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::read(c, buf, sizeof buf);
      if (n <= 0) break;
      req.append(buf, static_cast<size_t>(n));
      if (req[0] == 0x16) return req;  // TLS handshake record: not for us
    }
    // Read the body too (Content-Length), so closing does not reset the connection.
    auto cl = req.find("Content-Length: ");
    size_t head = req.find("\r\n\r\n");
    if (cl != std::string::npos && head != std::string::npos) {
      size_t want = head + 4 + std::stoul(req.substr(cl + 16));
      while (req.size() < want) {
        ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        req.append(buf, static_cast<size_t>(n));
      }
    }
    return req;
  }

  RawHandler handler_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

inline std::string Reply(int status, const std::string& body, const std::string& extra = "") {
  return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n" + extra + "\r\n" + body;
}

}  // namespace imgtool::remote
