// CPPHTTPLIB_OPENSSL_SUPPORT comes from pkg-config cpp-httplib (CMakeLists.txt), as Debian built the library.
#include "admission/server.h"

#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <thread>

#include "fs/safe_open.h"

namespace imgtool::admission {

Status ParseListen(const std::string& text, ServerOptions& out) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos) return MakeError(ErrorKind::kInvalidInput, "--listen '" + text + "': want HOST:PORT");
  std::string host = text.substr(0, colon), port = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) > 65535) {
    return MakeError(ErrorKind::kInvalidInput, "--listen '" + text + "': port '" + port + "' is not a number");
  }
  out.host = host.empty() ? "0.0.0.0" : host;
  out.port = std::stoi(port);
  return Status::Ok();
}

Status Serve(const ServerOptions& o, const Handler& handler, const std::function<void()>& on_listening) {
  // httplib hands the paths to OpenSSL, whose open would wait forever on a FIFO.
  for (const std::string* path : {&o.tls_cert, &o.tls_key}) {
    auto fd = fs::OpenRegular(*path);
    if (!fd.ok()) return fd.error();
  }
  httplib::SSLServer svr(o.tls_cert.c_str(), o.tls_key.c_str());
  if (!svr.is_valid()) {
    return MakeError(ErrorKind::kInvalidInput,
                     "TLS: cannot load the certificate '" + o.tls_cert + "' and key '" + o.tls_key + "'");
  }
  size_t threads = o.threads == 0 ? 1 : o.threads;
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  svr.set_payload_max_length(o.max_body_bytes);
  svr.set_read_timeout(o.read_timeout_s, 0);
  svr.set_write_timeout(o.write_timeout_s, 0);
  svr.set_keep_alive_timeout(o.keep_alive_timeout_s);
  svr.set_keep_alive_max_count(o.keep_alive_max_requests);
  // httplib writes headers and body apart: without this, Nagle and the client's delayed
  // ACK add 40 ms to every answer on a kept-alive connection.
  svr.set_tcp_nodelay(true);
  auto log = [&o](const std::string& line) {
    if (o.log) o.log(line);
  };

  svr.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
  auto review = [&handler, &log](Mode mode) {
    return [&handler, &log, mode](const httplib::Request& req, httplib::Response& res) {
      Answer a = handler(req.body, mode);
      res.status = a.http_status;
      res.set_content(a.body, "application/json");
      if (a.http_status != 200) log(req.path + ": HTTP " + std::to_string(a.http_status));
    };
  };
  svr.Post("/validate", review(Mode::kValidate));
  if (o.mutate) svr.Post("/mutate", review(Mode::kMutate));
  // Errors httplib answers itself (body over the limit: 413) carry no AdmissionReview;
  // the API server treats them as a webhook failure, which the failurePolicy turns into a deny.
  svr.set_exception_handler([&log](const httplib::Request& req, httplib::Response& res, std::exception_ptr) {
    res.status = 500;
    res.set_content("{\"error\":\"internal error\"}", "application/json");
    log(req.path + ": internal error");
  });

  if (!svr.bind_to_port(o.host, o.port)) {
    return MakeError(ErrorKind::kTransport, "cannot listen on " + o.host + ":" + std::to_string(o.port));
  }
  // Stop on SIGTERM/SIGINT from a thread that waits for them (a handler may not call stop()).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::atomic<bool> stopped{false};
  std::thread stopper([&svr, &stopped, set] {
    int sig = 0;
    sigwait(&set, &sig);
    stopped = true;
    svr.stop();
  });
  if (on_listening) on_listening();
  bool ok = svr.listen_after_bind();
  // Release the waiter when the listener ended by itself (the signal stays blocked there).
  if (!stopped) pthread_kill(stopper.native_handle(), SIGTERM);
  stopper.join();
  if (!ok && !stopped) return MakeError(ErrorKind::kTransport, "the listener on " + o.host + " failed");
  return Status::Ok();
}

}  // namespace imgtool::admission
