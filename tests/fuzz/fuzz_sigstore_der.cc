// DER from outside in keyless verification: Fulcio certificates (identity, leaf checks,
// the chain to the trusted root, embedded SCTs) and RFC 3161 timestamps (OpenSSL's TS
// parser, then the checks against the trusted root's TSAs). The same input is tried as
// both; the public-good root built into imgtool is the trust.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "sigstore/certificate.h"
#include "sigstore/public_good_root.h"
#include "sigstore/sct.h"
#include "sigstore/timestamp.h"

namespace {

const imgtool::sigstore::TrustedRoot& Root() {
  static const imgtool::sigstore::TrustedRoot root = [] {
    auto r = imgtool::sigstore::ParseTrustedRoot(imgtool::sigstore::PublicGoodTrustedRoot(), "public-good");
    if (!r.ok()) std::abort();
    return *r;
  }();
  return root;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool::sigstore;  // NOLINT(google-build-using-namespace): a harness
  std::string_view der = imgtool::fuzz::Bytes(data, size);
  (void)VerifyTimestamp(der, "signature bytes", Root());
  auto cert = ParseCertificateDer(der, "fuzzed certificate");
  if (!cert.ok()) return 0;
  (void)ReadIdentity(*cert);
  (void)CheckLeaf(*cert);
  // 2024-03-19, when the suite's v0.3 leaf was valid: the chain checks run to the end.
  auto chain = VerifyChain({*cert}, Root(), 1710869186);
  const Cert& issuer = chain.ok() ? chain->issuer : Root().certificate_authorities.back().chain.front();
  (void)VerifyScts(*cert, issuer, Root());
  return 0;
}
