// Transparency-log checkpoints (imgtool/sigstore/checkpoint.h): the signed note of an
// inclusion proof, parsed and verified against the public-good Rekor keys (the v1 log's
// ECDSA key and the v2 log's Ed25519 key), so both key-hint rules are reached.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "sigstore/checkpoint.h"
#include "sigstore/public_good_root.h"

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
  std::string_view note = imgtool::fuzz::Bytes(data, size);
  auto parsed = imgtool::sigstore::ParseSignedNote(note);
  if (parsed.ok()) (void)imgtool::sigstore::ParseCheckpoint(parsed->text);
  for (const auto& log : Root().tlogs) (void)imgtool::sigstore::VerifyCheckpoint(note, log);
  return 0;
}
