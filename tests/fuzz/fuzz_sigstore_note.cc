// Transparency-log checkpoints (imgtool/sigstore/checkpoint.h): the signed note of an
// inclusion proof, parsed and verified against the public-good Rekor keys (the v1 log's
// ECDSA key and the v2 log's Ed25519 key), so both key-hint rules are reached.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_sigstore.h"
#include "fuzz_util.h"
#include "sigstore/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view note = imgtool::fuzz::Bytes(data, size);
  auto parsed = imgtool::sigstore::ParseSignedNote(note);
  if (parsed.ok()) (void)imgtool::sigstore::ParseCheckpoint(parsed->text);
  for (const auto& log : imgtool::fuzz::PublicGoodRoot().tlogs) (void)imgtool::sigstore::VerifyCheckpoint(note, log);
  return 0;
}
