// Fleet fingerprints and expectations (imgtool/fleet/fingerprint.h FingerprintFromJson,
// compare.h ExpectedFields): a worker's fingerprint as the chief reads it off the store
// or a file, and the --expect documents (stack.json, a build record, build --json).
// A fingerprint read writes back to one that reads the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fleet/compare.h"
#include "fleet/fingerprint.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool::fleet;
  std::string text(imgtool::fuzz::Bytes(data, size));
  if (auto fp = FingerprintFromJson(text); fp.ok()) {
    (void)FingerprintDigest(*fp, {});
    (void)FingerprintDigest(*fp, {"env.*", "lib.libnccl.so.2"});
    auto again = FingerprintFromJson(ToJson(*fp).dump());
    if (!again.ok() || again->fields != fp->fields || again->node != fp->node) std::abort();
  }
  if (auto expected = ExpectedFields(text); expected.ok()) {
    for (const auto& [field, value] : *expected) (void)ExpectedValueMatches(field, value, "13.0");
  }
  return 0;
}
