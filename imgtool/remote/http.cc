#include "remote/http.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

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
};

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

struct HttpClient::Impl {
  std::unique_ptr<CURL, CurlFree> curl;
};

HttpClient::HttpClient() : impl_(std::make_unique<Impl>()) {
  GlobalInit();
  impl_->curl.reset(curl_easy_init());
}

HttpClient::~HttpClient() = default;

Result<HttpResponse> HttpClient::Send(const HttpRequest& req, NetError* net) {
  CURL* c = impl_->curl.get();
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
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, connect_seconds_);
  // A stalled connection (under 1 kB/s for stall_seconds_, 60 by default) is a transport
  // error, not a hang.
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, stall_seconds_);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &x);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnWrite);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &x);
  curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 512L * 1024);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, req.follow_redirects ? 1L : 0L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_USERAGENT, "imgtool/" IMGTOOL_VERSION);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, tls_.verify ? 1L : 0L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, tls_.verify ? 2L : 0L);
  if (!tls_.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, tls_.ca_file.c_str());
  if (!tls_.client_cert.empty()) curl_easy_setopt(c, CURLOPT_SSLCERT, tls_.client_cert.c_str());
  if (!tls_.client_key.empty()) curl_easy_setopt(c, CURLOPT_SSLKEY, tls_.client_key.c_str());
  if (req.max_send_bytes_per_sec) {
    curl_easy_setopt(c, CURLOPT_MAX_SEND_SPEED_LARGE, static_cast<curl_off_t>(req.max_send_bytes_per_sec));
  }

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
  if (debug_) {
    debug_("> " + req.method + " " + req.url);
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
      return MakeError(ErrorKind::kTransport, req.method + " " + req.url + ": response larger than " +
                                                  std::to_string(req.max_body) + " bytes");
    }
    NetError e;
    e.curl_code = rc;
    e.message = curl_easy_strerror(rc);
    e.tls_protocol = rc == CURLE_SSL_CONNECT_ERROR;
    e.tls_verify =
        rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CERTPROBLEM;
    e.retryable = rc == CURLE_COULDNT_CONNECT || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR ||
                  rc == CURLE_GOT_NOTHING || rc == CURLE_PARTIAL_FILE || rc == CURLE_OPERATION_TIMEDOUT;
    if (net) *net = e;
    if (debug_) debug_("< (" + e.message + ")");
    return MakeError(ErrorKind::kTransport, req.method + " " + req.url + ": " + e.message);
  }
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  resp.status = code;
  if (debug_) debug_("< " + std::to_string(code) + " " + resp.Header("content-type"));
  return resp;
}

}  // namespace imgtool::remote
