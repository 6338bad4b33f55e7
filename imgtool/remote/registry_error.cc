#include "remote/registry_error.h"

#include <cstdlib>

#include "oci/canonical_json.h"
#include "oci/quote.h"

namespace imgtool::remote {

namespace {

const char* StatusText(long status) {
  switch (status) {
    case 400:
      return "Bad Request";
    // A HEAD has no body to carry the registry's code: use the spec's code names.
    case 401:
      return "UNAUTHORIZED: authentication required";
    case 403:
      return "DENIED: requested access to the resource is denied";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 416:
      return "Range Not Satisfiable";
    case 429:
      return "TOOMANYREQUESTS: too many requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "";
  }
}

}  // namespace

std::string DescribeResponse(const HttpResponse& resp) {
  std::string out = std::to_string(resp.status);
  // Registries answer with {"errors":[...]}; parse leniently, it is only for the message.
  oci::Json j = oci::ParseJsonOrDiscarded(resp.body);
  std::string detail;
  if (j.is_object() && j.contains("errors") && j["errors"].is_array()) {
    for (const auto& e : j["errors"]) {
      if (!e.is_object()) continue;
      // Strings only: the body is the server's.
      std::string code = oci::StringMember(e, "code");
      std::string msg = oci::StringMember(e, "message");
      if (!detail.empty()) detail += "; ";
      detail += code.empty() ? msg : (msg.empty() ? code : code + ": " + msg);
    }
  }
  // The server's words, on one line and escaped: a registry cannot forge a line of ours.
  if (!detail.empty()) return out + " " + oci::Printable(detail, false);
  const char* text = StatusText(resp.status);
  return *text ? out + " " + text : out;
}

Error ErrorFromResponse(const HttpResponse& resp, const std::string& what) {
  ErrorKind kind = ErrorKind::kTransport;
  if (resp.status == 401 || resp.status == 403) kind = ErrorKind::kDenied;
  if (resp.status == 404) kind = ErrorKind::kNotFound;
  return MakeError(kind, what + ": " + DescribeResponse(resp));
}

bool IsTemporaryStatus(long status) { return status == 429 || (status >= 500 && status != 501); }

double RetryAfterSeconds(const HttpResponse& resp) {
  std::string v = resp.Header("retry-after");
  if (v.empty()) return -1;
  char* end = nullptr;
  double s = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || s < 0) return -1;
  return s;
}

}  // namespace imgtool::remote
