// The network seam: one HTTP exchange over libcurl. Everything above it (registry
// protocol, auth, transfers) talks in HttpRequest / HttpResponse, so tests can point
// it at a fake server on 127.0.0.1 and the rest of the library never sees a CURL*.
//
// Redirects are followed by libcurl with CURLOPT_UNRESTRICTED_AUTH off: an Authorization
// header goes to the first URL's origin only (scheme, host and port; remote_test.cc pins
// that libcurl drops our own header on a redirect elsewhere).
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

// How long an exchange may wait. Every exchange has a connect and a stall bound; one whose
// bodies are both in memory (/v2/, tokens, manifests, HEAD, starting an upload) is also
// bounded as a whole. Blob bodies have no whole bound: a large layer on a slow link may
// take hours, and only a stall says the peer is gone.
struct NetTimeouts {
  long connect_s = 30;   // TCP connect and TLS handshake: a host that drops SYNs
  long stall_s = 60;     // less than kLowSpeedBytesPerSec for this long: the peer is stuck
  long request_s = 120;  // the 8 MiB manifest cap at ~70 KB/s; small answers take far less
};
constexpr long kLowSpeedBytesPerSec = 1024;

// $IMGTOOL_CONNECT_TIMEOUT, $IMGTOOL_STALL_TIMEOUT, $IMGTOOL_REQUEST_TIMEOUT (whole seconds,
// at least 1); the defaults above for those unset. A malformed value is kInvalidInput.
Result<NetTimeouts> NetTimeoutsFromEnv();

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
  bool timed_out = false;     // a NetTimeouts bound was reached
  // Reset or refused: worth another try. Never a timeout: a stalled exchange asked again
  // (on a reused connection, or resumed mid-blob) would multiply the wait the user set,
  // and the documented bound ($IMGTOOL_STALL_TIMEOUT, 60 s) would fire after twice that.
  bool retryable = false;
};

// One libcurl easy handle (keeps its connection alive between requests).
class HttpClient {
 public:
  HttpClient();
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  void set_tls(const TlsOptions& tls) { tls_ = tls; }
  void set_timeouts(const NetTimeouts& t) { timeouts_ = t; }
  void set_debug(std::function<void(const std::string&)> debug) { debug_ = std::move(debug); }

  // An HTTP status (any, including 4xx/5xx) or a NetError in `net`.
  Result<HttpResponse> Send(const HttpRequest& req, NetError* net);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  TlsOptions tls_;
  NetTimeouts timeouts_;
  std::function<void(const std::string&)> debug_;
};

// "Authorization: Basic abc" -> "Authorization: <redacted>", for --debug. URLs are
// printed without userinfo (ref::WithoutUserinfo); bodies are never printed.
std::string RedactHeader(const std::string& header);

}  // namespace imgtool::remote
