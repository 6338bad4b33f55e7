// DSSE envelopes and in-toto statements (imgtool/sign_core/dsse.h): attestations as read from
// a .att image. The input is read as an envelope (unverified payload, and verification,
// which stops at the signature); then as a statement that the harness wraps in an
// envelope signed by its own trusted key, so the statement checks (type, subject
// digest, predicateType) are reached as they are for a real attestation.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_keys.h"
#include "fuzz_util.h"
#include "oci/digest.h"
#include "sign_core/dsse.h"
#include "sign_core/keys.h"

namespace {

using namespace imgtool;

const oci::Digest& Image() {
  static const oci::Digest d = oci::Digest::Of("the image a fuzzed statement is about");
  return d;
}

const std::vector<sign::TrustedKey>& Keys() { return fuzz::HarnessKeys(); }

sign::SignatureLayer Layer(std::string envelope) {
  sign::SignatureLayer l;
  l.descriptor.media_type = std::string(sign::kDsseMediaType);
  l.descriptor.digest = oci::Digest::Of(envelope);
  l.descriptor.size = static_cast<int64_t>(envelope.size());
  l.descriptor.annotations["predicateType"] = "https://spdx.dev/Document";
  l.payload = std::move(envelope);
  return l;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::MaybeWriteSeeds([] {
    auto statement = sign::InTotoStatement("registry.test/app", Image(), "https://spdx.dev/Document",
                                           R"({"spdxVersion":"SPDX-2.3","name":"app"})");
    if (!statement.ok()) std::abort();
    auto sig = sign::SignSha256(Keys()[0].key, sign::Pae(sign::kInTotoPayloadType, *statement));
    if (!sig.ok()) std::abort();
    return fuzz::Seeds{{"statement.json", *statement},
                       {"envelope.json", sign::DsseEnvelope(sign::kInTotoPayloadType, *statement, *sig)}};
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(fuzz::Bytes(data, size));
  (void)sign::EnvelopePayload(input);
  (void)sign::VerifyAttestations({Layer(input)}, Image(), Keys());

  auto sig = sign::SignSha256(Keys()[0].key, sign::Pae(sign::kInTotoPayloadType, input));
  if (!sig.ok()) std::abort();
  std::string envelope = sign::DsseEnvelope(sign::kInTotoPayloadType, input, *sig);
  (void)sign::VerifyAttestations({Layer(envelope)}, Image(), Keys());
  (void)sign::VerifyAttestations({Layer(envelope)}, Image(), Keys(), "https://spdx.dev/Document");
  return 0;
}
