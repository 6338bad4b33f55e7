// Sigstore bundles (imgtool/sigstore/bundle.h) and the whole keyless verification
// (verifier.h) behind verify-blob, `verify --certificate-identity` and signedBy
// identities: the input is a bundle, parsed and, when it parses, verified against the
// public-good trusted root built into imgtool, for the conformance suite's artifact (so a
// seed from the suite gets past the signature to the log, timestamp and certificate
// checks) and for its digest alone, under a time policy that varies with the input.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_sigstore.h"
#include "fuzz_util.h"
#include "sigstore/verifier.h"

namespace {

using namespace imgtool;  // NOLINT(google-build-using-namespace): a harness

// tests/fixtures/sigstore/conformance/a.txt, the file the suite's bundles sign.
constexpr char kArtifact[] =
    "DO NOT MODIFY ME!\n\nthis is \"a.txt\", a sample input for sigstore-conformance's test suite.\n\n"
    "DO NOT MODIFY ME!\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bundle = sigstore::ParseBundle(fuzz::Bytes(data, size), "fuzzed bundle");
  if (!bundle.ok()) return 0;
  // The identity by regexp, so that a bundle that gets that far reaches the matcher with a
  // subject the input chose. Compiled once, as the CLI and policy parsers do.
  static const regexp::GoRegexp kSubject = *regexp::GoRegexp::Compile("^https://github.com/sigstore-conformance/.*$");
  sigstore::VerifyPolicy policy;
  policy.identity = sigstore::IdentityPolicy{"", kSubject, "https://token.actions.githubusercontent.com", {}};
  // The time policy varies with the input's length, so strict mode and the thresholds
  // (signed_times.h) are reached too.
  policy.times = sigstore::TimePolicy{1 + static_cast<int>(size % 3), static_cast<int>(size % 2), size % 5 == 0};
  (void)sigstore::MessageHashes(*bundle);
  const sigstore::Artifact artifact = sigstore::ArtifactOf(std::string(kArtifact, sizeof(kArtifact) - 1));
  (void)sigstore::VerifyBundle(*bundle, fuzz::PublicGoodRoot(), artifact, policy);
  (void)sigstore::VerifyBundle(*bundle, fuzz::PublicGoodRoot(), sigstore::Artifact{artifact.sha256, std::nullopt, {}},
                               policy);
  return 0;
}
