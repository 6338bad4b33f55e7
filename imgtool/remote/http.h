// The network seam: one HTTP exchange over libcurl. Everything above it (registry
// protocol, auth, transfers) talks in HttpRequest / HttpResponse, so tests can point
// it at a fake server on 127.0.0.1 and the rest of the library never sees a CURL*.
//
// Not here: retries, auth, registry semantics (registry.h), and printing: the debug
// hook receives lines with secrets already removed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "oci/reader.h"
#include "oci/result.h"

namespace imgtool::remote {

struct TlsOptions {
  bool verify = true;       // --tls-verify
  std::string ca_file;      // from --cert-dir (ca.crt); empty: system CAs
  std::string client_cert;  // client.cert
  std::string client_key;   // client.key
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  // Body: either in memory, or a byte range of a reader that reads at offsets (a file:
  // re-readable, so a request can be replayed after a 401 or a reset without holding
  // the blob in memory).
  std::string body;
  oci::Reader* body_reader = nullptr;
  uint64_t body_offset = 0;
  uint64_t body_length = 0;
  bool has_body = false;
  // Response body: into HttpResponse::body (capped), or handed to this sink, which
  // returns false to abort the transfer.
  std::function<bool(const char* data, size_t n)> sink;
  size_t max_body = 4 << 20;
  // Called with the status before the first body byte reaches the sink.
  std::function<void(long status)> on_status;
  // Bytes sent so far of this request's body (progress of an upload).
  std::function<void(uint64_t sent)> on_sent;
  bool follow_redirects = true;
  uint64_t max_send_bytes_per_sec = 0;  // 0: unlimited (tests throttle to interrupt)
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased; last value wins
  std::vector<std::string> www_authenticate;   // every challenge, in order
  std::string body;
  std::string Header(const std::string& lower_name) const;
};

// Transport-level failure: no HTTP status at all.
struct NetError {
  int curl_code = 0;
  std::string message;
  bool tls_protocol = false;  // server does not speak TLS (plain HTTP on the port)
  bool tls_verify = false;    // certificate not trusted / wrong name
  bool retryable = false;     // reset, refused, timeout: worth another try
};

// One libcurl easy handle (keeps its connection alive between requests).
class HttpClient {
 public:
  HttpClient();
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  void set_tls(const TlsOptions& tls) { tls_ = tls; }
  // Seconds for the TCP and TLS handshakes; seconds under 1 kB/s before a stalled exchange
  // is a transport error.
  void set_timeouts(long connect_seconds, long stall_seconds) {
    connect_seconds_ = connect_seconds;
    stall_seconds_ = stall_seconds;
  }
  void set_debug(std::function<void(const std::string&)> debug) { debug_ = std::move(debug); }

  // An HTTP status (any, including 4xx/5xx) or a NetError in `net`.
  Result<HttpResponse> Send(const HttpRequest& req, NetError* net);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  TlsOptions tls_;
  long connect_seconds_ = 30;
  long stall_seconds_ = 60;
  std::function<void(const std::string&)> debug_;
};

// "Authorization: Basic abc" -> "Authorization: <redacted>"; also hides ?_state= and
// token values in URLs and bodies printed by --debug.
std::string RedactHeader(const std::string& header);

}  // namespace imgtool::remote
