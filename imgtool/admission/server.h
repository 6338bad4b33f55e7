// The HTTPS layer, kept thin: POST /validate and (with mutate) POST /mutate hand the body
// to a handler (decide.h) and write its answer, as do /validate/<set> and /mutate/<set>
// for each named policy set (any other path is 404); GET /healthz says ok; GET /metrics
// answers the metrics text. cpp-httplib underneath; nothing else in imgtool sees it.
// /metrics shares the TLS listener: the probes and the API server already share that
// port in examples/k8s, and a second listener would need the same bounds.
//
// What one client can hold is bounded: a thread per connection up to max_connections
// (beyond, a connection is closed at its first handshake step), so no connection waits
// behind a busy one; a whole TLS handshake and request within read_timeout_s, and the next
// request on a kept-alive connection within keep_alive_timeout_s + read_timeout_s, else
// the connection is cut (conn_watchdog.h); a body size limit. /healthz is answered like
// any request, on a thread of its own, so slow reviews and slow clients do not delay it.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "admission/decide.h"
#include "admission/tls_reload.h"
#include "oci/result.h"

namespace imgtool::admission {

struct ServerOptions {
  std::string host = "0.0.0.0";
  int port = 8443;
  std::string tls_cert;  // PEM paths
  std::string tls_key;
  size_t threads = 64;              // started at once and kept; a kept-alive connection holds one
  size_t max_connections = 512;     // each on its own thread; more are closed at once
  size_t max_body_bytes = 3 << 20;  // the API server's own request limit is 3 MiB
  int read_timeout_s = 5;           // the TLS handshake and a whole request, in all
  int write_timeout_s = 5;
  int keep_alive_timeout_s = 5;  // idle, between requests
  // Requests one kept-alive connection may carry before the server closes it. The API
  // server keeps its connections to a webhook open; httplib's default of 5 made every
  // fifth review pay a TLS handshake.
  size_t keep_alive_max_requests = 1000;
  bool mutate = false;                          // also serve /mutate
  std::vector<std::string> policy_sets;         // named sets: /validate/<set> (names: CheckSetName)
  std::function<std::string()> metrics;         // GET /metrics when set (text format 0.0.4)
  CertificateStore* certificates = nullptr;     // when set, each handshake presents its current pair
  std::function<void(const std::string&)> log;  // one line per event; may be empty
};

// `policy_set`: "" for /validate and /mutate, else the <set> of the path.
using Handler = std::function<Answer(const std::string& body, Mode mode, const std::string& policy_set)>;

// "HOST:PORT", "[V6]:PORT" or ":PORT" (all interfaces).
Status ParseListen(const std::string& text, ServerOptions& out);

// Serves until SIGTERM or SIGINT; an error when the certificate or the address is unusable.
// `on_listening` runs once the port is bound (the CLI prints the address).
Status Serve(const ServerOptions& options, const Handler& handler, const std::function<void()>& on_listening);

}  // namespace imgtool::admission
