// Signature payloads (imgtool/sign_core/payload.h, verify.h): cosign's "simple signing" JSON
// as read from a .sig image. A fuzzer cannot forge ECDSA, so the harness signs each
// input with its own trusted key and runs the whole verification: the claim check
// (type, the image's digest) is then reached by every input, as it is by a payload a
// trusted key really signed. Unsigned, the input is also a payload read alone.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_keys.h"
#include "fuzz_util.h"
#include "oci/base64.h"
#include "oci/digest.h"
#include "sign_core/keys.h"
#include "sign_core/payload.h"
#include "sign_core/verify.h"

namespace {

using namespace imgtool;

const oci::Digest& Image() {
  static const oci::Digest d = oci::Digest::Of("the image a fuzzed payload claims");
  return d;
}

const std::vector<sign::TrustedKey>& Keys() { return fuzz::HarnessKeys(); }

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::MaybeWriteSeeds([] {
    auto plain = sign::SimpleSigningPayload("registry.test/app", Image());
    auto annotated = sign::SimpleSigningPayload("registry.test/app", Image(), {{"run", "42"}, {"team", "ml"}});
    auto other = sign::SimpleSigningPayload("registry.test/app", oci::Digest::Of("another image"));
    if (!plain.ok() || !annotated.ok() || !other.ok()) std::abort();
    return fuzz::Seeds{{"payload.json", *plain}, {"annotated.json", *annotated}, {"other-image.json", *other}};
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string payload(fuzz::Bytes(data, size));
  (void)sign::ParseSimpleSigningPayload(payload, "payload");
  auto sig = sign::SignSha256(Keys()[0].key, payload);
  if (!sig.ok()) std::abort();
  sign::SignatureLayer layer;
  layer.descriptor.media_type = std::string(sign::kSimpleSigningMediaType);
  layer.descriptor.digest = oci::Digest::Of(payload);
  layer.descriptor.size = static_cast<int64_t>(payload.size());
  layer.descriptor.annotations[std::string(sign::kSignatureAnnotation)] = oci::Base64Encode(*sig);
  layer.payload = payload;
  (void)sign::VerifySignatures({layer}, Image(), Keys());
  return 0;
}
