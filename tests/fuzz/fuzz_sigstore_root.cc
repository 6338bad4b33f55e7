// Sigstore trusted roots (imgtool/sigstore/trusted_root.h): the file --trusted-root and a
// policy's trustedRoot name. Parsed, then every log ID looked up.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "sigstore/trusted_root.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto root = imgtool::sigstore::ParseTrustedRoot(imgtool::fuzz::Bytes(data, size), "fuzzed trusted root");
  if (!root.ok()) return 0;
  for (const auto& log : root->tlogs) (void)imgtool::sigstore::FindLogs(root->ctlogs, log.log_id);
  return 0;
}
