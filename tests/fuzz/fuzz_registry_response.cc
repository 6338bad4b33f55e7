// What else a registry answers (imgtool/remote/response.h, registry_error.h): error
// bodies turned into messages, Retry-After, the tag list body and its Link pagination,
// an upload session's Location and Range, a HEAD's Content-Length, a token server's
// reply, a manifest's media type. Each reads the whole input, as a body or as a header
// value (curl hands header values over trimmed, and so do we).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "remote/registry_error.h"
#include "remote/response.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool::remote;
  std::string text(imgtool::fuzz::Bytes(data, size));
  const std::string base = "https://registry.test:5000";

  HttpResponse resp;
  resp.status = size > 0 ? 400 + data[0] % 110 : 500;
  resp.body = text;
  resp.headers["retry-after"] = text;
  (void)DescribeResponse(resp);
  (void)ErrorFromResponse(resp, "pushing blob");
  (void)RetryAfterSeconds(resp);

  (void)TagsFromBody(text);
  (void)NextPageUrl(text, base);
  (void)AbsoluteLocation(base, text);
  (void)ResumeOffset(text);
  (void)ContentLength(text);
  (void)TokenFromReply(text);
  (void)ManifestMediaType(text, text);
  return 0;
}
