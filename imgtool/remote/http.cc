#include "remote/http.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

#include "ref/url.h"
#include "remote/curl_library.h"
#include "remote/stall_watch.h"

namespace imgtool::remote {

namespace {

struct CurlFree {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistFree {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

// curl_global_init is not thread-safe; run it once before the first handle.
void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Per-request state the callbacks see.
struct Exchange {
  const HttpRequest* req = nullptr;
  HttpResponse* resp = nullptr;
  uint64_t sent = 0;
  bool sink_failed = false;
  bool too_big = false;
  int read_errno = 0;
  std::string read_error;  // the body reader's own error
  uint64_t body_length = 0;
  bool status_reported = false;
  CURL* curl = nullptr;
  std::optional<StallWatch> stall;  // from the first moment the connection is there
  long stall_s = 0;
  bool stalled = false;
};

// curl's progress callback: ends the exchange once StallWatch says it is stalled. The
// watch starts when the request is about to be sent (connecting has its own bound).
int OnProgress(void* user, curl_off_t, curl_off_t down, curl_off_t, curl_off_t up) {
  auto* x = static_cast<Exchange*>(user);
  if (!x->stall) {
    curl_off_t pretransfer = 0;
    curl_easy_getinfo(x->curl, CURLINFO_PRETRANSFER_TIME_T, &pretransfer);
    if (pretransfer == 0) return 0;
    x->stall.emplace(std::chrono::seconds(x->stall_s), kLowSpeedBytesPerSec);
  }
  if (!x->stall->Stalled(static_cast<uint64_t>(down + up), StallWatch::Clock::now())) return 0;
  x->stalled = true;
  return 1;  // CURLE_ABORTED_BY_CALLBACK
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* x = static_cast<Exchange*>(user);
  std::string line(data, size * n);
  // A new status line (after a redirect or 100-continue) starts a fresh header set.
  if (line.rfind("HTTP/", 0) == 0) {
    auto sp = line.find(' ');
    x->resp->status = sp == std::string::npos ? 0 : std::atol(line.c_str() + sp + 1);
    x->resp->headers.clear();
    x->resp->www_authenticate.clear();
    return size * n;
  }
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = Lower(Trim(line.substr(0, colon)));
    std::string value = Trim(line.substr(colon + 1));
    if (name == "www-authenticate") x->resp->www_authenticate.push_back(value);
    x->resp->headers[name] = value;
  }
  return size * n;
}

size_t OnWrite(char* data, size_t size, size_t n, void* user) {
  auto* x = static_cast<Exchange*>(user);
  size_t len = size * n;
  // Error statuses always land in memory so their body can be parsed into a message.
  if (x->req->sink && x->resp->status < 300) {
    if (!x->status_reported) {
      x->status_reported = true;
      if (x->req->on_status) x->req->on_status(x->resp->status);
    }
    if (!x->req->sink(data, len)) {
      x->sink_failed = true;
      return 0;
    }
    return len;
  }
  if (x->resp->body.size() + len > x->req->max_body) {
    x->too_big = true;
    return 0;
  }
  x->resp->body.append(data, len);
  return len;
}

size_t OnRead(char* buf, size_t size, size_t n, void* user) {
  auto* x = static_cast<Exchange*>(user);
  const HttpRequest& r = *x->req;
  uint64_t left = x->body_length - x->sent;
  size_t want = static_cast<size_t>(std::min<uint64_t>(left, size * n));
  if (want == 0) return 0;
  size_t got;
  if (r.body_reader) {
    auto k = r.body_reader->ReadAt(r.body_offset + x->sent, buf, want);
    if (!k.ok() || *k == 0) {
      x->read_errno = EIO;
      x->read_error = k.ok() ? "the body ended early" : k.error().message;
      return CURL_READFUNC_ABORT;
    }
    got = *k;
  } else {
    std::memcpy(buf, r.body.data() + x->sent, want);
    got = want;
  }
  x->sent += got;
  if (r.on_sent) r.on_sent(x->sent);
  return got;
}

Result<long> SecondsFromEnv(const char* name, long fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  long n = std::strtol(v, &end, 10);
  if (errno != 0 || *end != '\0' || n < 1 || n > 86400) {
    return MakeError(ErrorKind::kInvalidInput,
                     std::string("$") + name + "=" + v + ": want whole seconds from 1 to 86400");
  }
  return n;
}

// An exchange whose bodies are both in memory is bounded as a whole (NetTimeouts).
bool IsSmall(const HttpRequest& req) { return !req.sink && !req.body_reader; }

// Which bound a CURLE_OPERATION_TIMEDOUT hit, and the knob that sets it.
std::string TimeoutMessage(CURL* c, const HttpRequest& req, const NetTimeouts& t, bool stalled) {
  // Microseconds. Connect and handshake times are 0 on a reused connection too: the
  // request was about to be sent (pretransfer) once the connection was there.
  curl_off_t pretransfer = 0, total = 0;
  curl_easy_getinfo(c, CURLINFO_PRETRANSFER_TIME_T, &pretransfer);
  curl_easy_getinfo(c, CURLINFO_TOTAL_TIME_T, &total);
  if (pretransfer == 0 && !stalled) {
    return "no connection within " + std::to_string(t.connect_s) + " s ($IMGTOOL_CONNECT_TIMEOUT)";
  }
  if (!stalled && IsSmall(req) && total + 500000 >= static_cast<curl_off_t>(t.request_s) * 1000000) {
    return "no complete answer within " + std::to_string(t.request_s) + " s ($IMGTOOL_REQUEST_TIMEOUT)";
  }
  return "stalled: less than " + std::to_string(kLowSpeedBytesPerSec) + " bytes/s for " + std::to_string(t.stall_s) +
         " s ($IMGTOOL_STALL_TIMEOUT)";
}

}  // namespace

std::string HttpResponse::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

std::string RedactHeader(const std::string& header) {
  std::string lower = Lower(header);
  if (lower.rfind("authorization:", 0) == 0) return "Authorization: <redacted>";
  return header;
}

Result<NetTimeouts> NetTimeoutsFromEnv() {
  NetTimeouts t;
  auto connect = SecondsFromEnv("IMGTOOL_CONNECT_TIMEOUT", t.connect_s);
  if (!connect.ok()) return connect.error();
  auto stall = SecondsFromEnv("IMGTOOL_STALL_TIMEOUT", t.stall_s);
  if (!stall.ok()) return stall.error();
  auto request = SecondsFromEnv("IMGTOOL_REQUEST_TIMEOUT", t.request_s);
  if (!request.ok()) return request.error();
  return NetTimeouts{*connect, *stall, *request};
}

struct HttpClient::Impl {
  std::unique_ptr<CURL, CurlFree> curl;
  Status loaded;  // LoadCurl's answer: why there is no handle
};

HttpClient::HttpClient() : impl_(std::make_unique<Impl>()) {
  impl_->loaded = LoadCurl();
  if (!impl_->loaded.ok()) return;
  GlobalInit();
  impl_->curl.reset(curl_easy_init());
}

HttpClient::~HttpClient() = default;

namespace {

void SetTransport(CURL* c, const TlsOptions& tls, const NetTimeouts& t, bool small, Exchange& x) {
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, t.connect_s);
  // The stall bound is StallWatch's, not CURLOPT_LOW_SPEED_TIME (see stall_watch.h).
  x.curl = c;
  x.stall_s = t.stall_s;
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &x);
  if (small) curl_easy_setopt(c, CURLOPT_TIMEOUT, t.request_s);
  curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 512L * 1024);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  // Said although it is libcurl's default: credentials never follow a redirect to
  // another scheme, host or port (storage behind a blob redirect gets none).
  curl_easy_setopt(c, CURLOPT_UNRESTRICTED_AUTH, 0L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "imgtool/" IMGTOOL_VERSION);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, tls.verify ? 1L : 0L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, tls.verify ? 2L : 0L);
  if (!tls.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, tls.ca_file.c_str());
  if (!tls.client_cert.empty()) curl_easy_setopt(c, CURLOPT_SSLCERT, tls.client_cert.c_str());
  if (!tls.client_key.empty()) curl_easy_setopt(c, CURLOPT_SSLKEY, tls.client_key.c_str());
}

void SetMethod(CURL* c, const HttpRequest& req, Exchange& x) {
  if (req.method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (req.has_body) {
    x.body_length = req.body_reader ? req.body_length : req.body.size();
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, 2L * 1024 * 1024);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, OnRead);
    curl_easy_setopt(c, CURLOPT_READDATA, &x);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(x.body_length));
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  } else if (req.method == "POST") {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
  } else if (req.method != "GET") {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }
}

NetError NetFailure(CURL* c, CURLcode rc, const HttpRequest& req, const NetTimeouts& t, bool stalled) {
  NetError e;
  e.curl_code = rc;
  e.timed_out = rc == CURLE_OPERATION_TIMEDOUT || stalled;
  e.message = e.timed_out ? TimeoutMessage(c, req, t, stalled) : curl_easy_strerror(rc);
  e.tls_protocol = rc == CURLE_SSL_CONNECT_ERROR;
  e.tls_verify = rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CERTPROBLEM;
  // A timeout is never worth another try: the bound the user set is the whole wait.
  e.retryable = rc == CURLE_COULDNT_CONNECT || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR ||
                rc == CURLE_GOT_NOTHING || rc == CURLE_PARTIAL_FILE;
  return e;
}

}  // namespace

Result<HttpResponse> HttpClient::Send(const HttpRequest& req, NetError* net) {
  CURL* c = impl_->curl.get();
  if (!impl_->loaded.ok()) return impl_->loaded.error();
  if (!c) return MakeError(ErrorKind::kInternal, "libcurl: cannot create a handle");
  curl_easy_reset(c);
  HttpResponse resp;
  Exchange x;
  x.req = &req;
  x.resp = &resp;

  std::unique_ptr<curl_slist, SlistFree> headers;
  curl_slist* list = nullptr;
  for (const auto& h : req.headers) list = curl_slist_append(list, h.c_str());
  // No "Expect: 100-continue" round trip: auth is settled on body-less requests first.
  list = curl_slist_append(list, "Expect:");
  headers.reset(list);

  curl_easy_setopt(c, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &x);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnWrite);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &x);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, req.follow_redirects ? 1L : 0L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
  SetTransport(c, tls_, timeouts_, IsSmall(req), x);
  if (req.max_send_bytes_per_sec) {
    curl_easy_setopt(c, CURLOPT_MAX_SEND_SPEED_LARGE, static_cast<curl_off_t>(req.max_send_bytes_per_sec));
  }
  SetMethod(c, req, x);
  const std::string shown = req.method + " " + ref::WithoutUserinfo(req.url);
  if (debug_) {
    debug_("> " + shown);
    for (const auto& h : req.headers) debug_("> " + RedactHeader(h));
  }
  CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK) {
    if (x.sink_failed) return MakeError(ErrorKind::kInternal, "writing the download failed");
    if (x.read_errno) {
      return MakeError(ErrorKind::kInternal, "reading the upload body: " +
                                                 (x.read_error.empty() ? std::strerror(x.read_errno) : x.read_error));
    }
    if (x.too_big) {
      return MakeError(ErrorKind::kTransport,
                       shown + ": response larger than " + std::to_string(req.max_body) + " bytes");
    }
    NetError e = NetFailure(c, rc, req, timeouts_, x.stalled);
    if (net) *net = e;
    if (debug_) debug_("< (" + e.message + ")");
    return MakeError(ErrorKind::kTransport, shown + ": " + e.message);
  }
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  resp.status = code;
  if (debug_) debug_("< " + std::to_string(code) + " " + resp.Header("content-type"));
  return resp;
}

}  // namespace imgtool::remote
