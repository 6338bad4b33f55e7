// Canonical JSON (imgtool/oci/canonical_json.h): ParseJson is the front door of every
// JSON document imgtool reads. Whatever it accepts and CanonicalJson can write must
// parse back to the same value, and writing that again must give the same bytes (the
// digest of a document never depends on how often it was written).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_util.h"
#include "oci/canonical_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool::oci;
  auto j = ParseJson(imgtool::fuzz::Bytes(data, size), "fuzz.json");
  if (!j.ok()) return 0;
  auto text = CanonicalJson(*j);
  if (!text.ok()) return 0;
  auto again = ParseJson(*text, "canonical");
  if (!again.ok() || *again != *j) std::abort();
  auto text2 = CanonicalJson(*again);
  if (!text2.ok() || *text2 != *text) std::abort();
  return 0;
}
