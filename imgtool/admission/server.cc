// The HTTPS server (server.h) on cpp-httplib: built into the module imgtool-admission-server.so
// (server_module.h), which imgtool loads only for `admission serve`.
// CPPHTTPLIB_OPENSSL_SUPPORT comes from pkg-config cpp-httplib (CMakeLists.txt), as Debian built the library.
#include "admission/server.h"

#include <httplib.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "admission/conn_pool.h"
#include "admission/conn_watchdog.h"

namespace imgtool::admission {

namespace {

using std::chrono::seconds;
using std::chrono::steady_clock;

// Set while the listener itself runs a connection over the cap: its handshake's first
// step shuts the socket, so the client is refused at once and the listener moves on.
thread_local bool t_refuse = false;

constexpr int kListenBacklog = 4096;

// What OpenSSL's callbacks need, found through the SSL_CTX's app data.
struct TlsHooks {
  ConnectionWatchdog* watchdog;
  seconds read_timeout;
};

// SSL_free runs before httplib closes the socket, so forgetting here is in time (the
// watchdog never shuts a descriptor that was closed and given to another connection).
void ForgetOnFree(void* parent, void* ptr, CRYPTO_EX_DATA*, int, long, void*) {
  if (ptr) static_cast<ConnectionWatchdog*>(ptr)->Forget(parent);
}

int WatchdogIndex() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, ForgetOnFree);
  return index;
}

// The first handshake step of every connection, on the thread that serves it.
void OnTlsInfo(const SSL* ssl, int where, int) {
  if (!(where & SSL_CB_HANDSHAKE_START)) return;
  int fd = SSL_get_fd(ssl);
  if (t_refuse) {
    ::shutdown(fd, SHUT_RDWR);
    return;
  }
  SSL* s = const_cast<SSL*>(ssl);  // OpenSSL hands callbacks a const SSL*; ex_data needs it mutable
  if (SSL_get_ex_data(s, WatchdogIndex())) return;
  auto* hooks = static_cast<TlsHooks*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
  SSL_set_ex_data(s, WatchdogIndex(), hooks->watchdog);
  hooks->watchdog->Register(ssl, fd, steady_clock::now() + hooks->read_timeout);
}

void HookTls(SSL_CTX* ctx, TlsHooks* hooks) {
  SSL_CTX_set_app_data(ctx, hooks);
  SSL_CTX_set_info_callback(ctx, OnTlsInfo);
  // A renegotiation is a handshake a client can ask for again and again, for free.
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
}

// httplib's task queue over the ConnectionPool: a connection gets a thread of its own,
// or, over the cap, is refused here and now.
class ConnectionQueue : public httplib::TaskQueue {
 public:
  ConnectionQueue(size_t warm, size_t max, ConnectionWatchdog& watchdog) : pool_(warm, max), watchdog_(watchdog) {}
  void enqueue(std::function<void()> fn) override {
    if (pool_.Run(fn)) return;
    t_refuse = true;
    fn();
    t_refuse = false;
    watchdog_.CountRefused();
  }
  void shutdown() override { pool_.Shutdown(); }

 private:
  ConnectionPool pool_;
  ConnectionWatchdog& watchdog_;
};

// Each connection holds a descriptor and registry checks a few more: lift the soft limit
// to the hard one (as Go's runtime does), and say so when even that is short of the cap.
void RaiseFileLimit(size_t max_connections, const std::function<void(const std::string&)>& log) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
  }
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < max_connections + 256) {
    log("open files limit " + std::to_string(rl.rlim_cur) + " is short of --max-connections " +
        std::to_string(max_connections) + " + 256 for registry checks");
  }
}

void Route(httplib::SSLServer& svr, const ServerOptions& o, const Handler& handler, ConnectionWatchdog& watchdog,
           const std::function<void(const std::string&)>& log) {
  // A request read whole has met its deadline; answering it has none here (the review's
  // own deadline bounds it). After the answer, the next request owes one again.
  auto answered = seconds(o.keep_alive_timeout_s + o.read_timeout_s);
  svr.set_post_routing_handler([&watchdog, answered](const httplib::Request& req, httplib::Response&) {
    if (req.ssl) watchdog.Rearm(req.ssl, steady_clock::now() + answered);
  });
  svr.Get("/healthz", [&watchdog](const httplib::Request& req, httplib::Response& res) {
    watchdog.Disarm(req.ssl);
    res.set_content("ok", "text/plain");
  });
  auto review = [&handler, &log, &watchdog](Mode mode, const std::string& set) {
    return [&handler, &log, &watchdog, mode, set](const httplib::Request& req, httplib::Response& res) {
      watchdog.Disarm(req.ssl);
      Answer a = handler(req.body, mode, set);
      res.status = a.http_status;
      res.set_content(a.body, "application/json");
      if (a.http_status != 200) log(req.path + ": HTTP " + std::to_string(a.http_status));
    };
  };
  // Set names are [a-z0-9-] (CheckSetName), so each path is literal in httplib's pattern.
  std::vector<std::string> sets{""};
  sets.insert(sets.end(), o.policy_sets.begin(), o.policy_sets.end());
  for (const std::string& set : sets) {
    std::string tail = set.empty() ? "" : "/" + set;
    svr.Post("/validate" + tail, review(Mode::kValidate, set));
    if (o.mutate) svr.Post("/mutate" + tail, review(Mode::kMutate, set));
  }
  if (o.metrics) {
    svr.Get("/metrics", [&o, &watchdog](const httplib::Request& req, httplib::Response& res) {
      watchdog.Disarm(req.ssl);
      res.set_content(o.metrics(), "text/plain; version=0.0.4; charset=utf-8");
    });
  }
  // Errors httplib answers itself (body over the limit: 413) carry no AdmissionReview;
  // the API server treats them as a webhook failure, which the failurePolicy turns into a deny.
  svr.set_exception_handler([&log](const httplib::Request& req, httplib::Response& res, const std::exception_ptr&) {
    res.status = 500;
    res.set_content("{\"error\":\"internal error\"}", "application/json");
    log(req.path + ": internal error");
  });
}

// SIGTERM and SIGINT, blocked in this thread and so in every thread it starts after: only
// the waiter in ListenUntilSignal takes them (a handler may not call stop()).
sigset_t BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

// Serves until SIGTERM/SIGINT, stopped from a thread that waits for them.
bool ListenUntilSignal(httplib::SSLServer& svr, const sigset_t& set, const std::function<void()>& on_listening,
                       bool& stopped_by_signal) {
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
  // SIGTERM is blocked in every thread here: it only wakes the stopper's sigwait.
  if (!stopped) pthread_kill(stopper.native_handle(), SIGTERM);  // NOLINT(bugprone-bad-signal-to-kill-thread)
  stopper.join();
  stopped_by_signal = stopped;
  return ok;
}

// Serve (server.h), in the module: the caller has checked that the paths are regular files.
Status ServeHttps(const ServerOptions& o, const Handler& handler, const std::function<void()>& on_listening) {
  // Before any thread starts (the watchdog's first), so none of them takes the signal.
  sigset_t stop_signals = BlockStopSignals();
  // A std::function, not a lambda: Route's handlers keep a reference to it.
  const std::function<void(const std::string&)> log = [&o](const std::string& line) {
    if (o.log) o.log(line);
  };
  // Declared before the server: OpenSSL's callbacks reach it until the last SSL is freed.
  ConnectionWatchdog watchdog(log);
  TlsHooks hooks{&watchdog, seconds(o.read_timeout_s)};
  httplib::SSLServer svr(o.tls_cert.c_str(), o.tls_key.c_str());
  if (!svr.is_valid()) {
    return MakeError(ErrorKind::kInvalidInput,
                     "TLS: cannot load the certificate '" + o.tls_cert + "' and key '" + o.tls_key + "'");
  }
  HookTls(svr.ssl_context(), &hooks);
  if (o.certificates) o.certificates->Install(svr.ssl_context());
  RaiseFileLimit(o.max_connections, log);
  size_t warm = o.threads == 0 ? 1 : o.threads;
  size_t max = std::max(o.max_connections, warm);
  svr.new_task_queue = [warm, max, &watchdog] { return new ConnectionQueue(warm, max, watchdog); };
  svr.set_payload_max_length(o.max_body_bytes);
  // Per read; the watchdog holds the whole handshake and request to the same figure.
  svr.set_read_timeout(o.read_timeout_s, 0);
  svr.set_write_timeout(o.write_timeout_s, 0);
  svr.set_keep_alive_timeout(o.keep_alive_timeout_s);
  svr.set_keep_alive_max_count(o.keep_alive_max_requests);
  // httplib writes headers and body apart: without this, Nagle and the client's delayed
  // ACK add 40 ms to every answer on a kept-alive connection.
  svr.set_tcp_nodelay(true);
  Route(svr, o, handler, watchdog, log);

  int listen_fd = -1;
  svr.set_socket_options([&listen_fd](socket_t sock) {
    httplib::default_socket_options(sock);
    listen_fd = sock;
  });
  if (!svr.bind_to_port(o.host, o.port)) {
    return MakeError(ErrorKind::kTransport, "cannot listen on " + o.host + ":" + std::to_string(o.port));
  }
  // httplib listens with a backlog of 5: a burst of connections (an attack's, or the API
  // server's own) overflowed it and the kernel made the rest retry their handshake after
  // 1, 2, 4 s. Listening again on a bound socket only resizes the queue (the kernel caps
  // it at net.core.somaxconn); connections over the cap must be accepted to be refused.
  if (listen_fd >= 0) ::listen(listen_fd, kListenBacklog);
  bool stopped = false;
  bool ok = ListenUntilSignal(svr, stop_signals, on_listening, stopped);
  if (!ok && !stopped) return MakeError(ErrorKind::kTransport, "the listener on " + o.host + " failed");
  return Status::Ok();
}

}  // namespace

}  // namespace imgtool::admission

// The module's one visible symbol (server_module.h).
extern "C" __attribute__((visibility("default"))) void imgtool_admission_serve(
    const imgtool::admission::ServerOptions* options, const imgtool::admission::Handler* handler,
    const std::function<void()>* on_listening, imgtool::Status* out) {
  *out = imgtool::admission::ServeHttps(*options, *handler, *on_listening);
}
