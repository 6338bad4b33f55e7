// DER from outside in keyless verification: Fulcio certificates (identity, leaf checks,
// the chain to the trusted root, embedded SCTs) and RFC 3161 timestamps (OpenSSL's TS
// parser, then the checks against the trusted root's TSAs). The same input is tried as
// both; the public-good root built into imgtool is the trust.
#include <cstddef>
#include <cstdint>

#include "fuzz_sigstore.h"
#include "fuzz_util.h"
#include "sigstore/certificate.h"
#include "sigstore/sct.h"
#include "sigstore/timestamp.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool::sigstore;  // NOLINT(google-build-using-namespace): a harness
  std::string_view der = imgtool::fuzz::Bytes(data, size);
  const TrustedRoot& root = imgtool::fuzz::PublicGoodRoot();
  (void)VerifyTimestamp(der, "signature bytes", root);
  auto cert = ParseCertificateDer(der, "fuzzed certificate");
  if (!cert.ok()) return 0;
  (void)ReadIdentity(*cert);
  (void)CheckLeaf(*cert);
  // 2024-03-19, when the suite's v0.3 leaf was valid: the chain checks run to the end.
  auto chain = VerifyChain({*cert}, root, 1710869186);
  const Cert& issuer = chain.ok() ? chain->issuer : root.certificate_authorities.back().chain.front();
  (void)VerifyScts(*cert, issuer, root);
  return 0;
}
