// Canonical JSON (imgtool/oci/canonical_json.h): ParseJson is the front door of every
// JSON document imgtool reads. Whatever it accepts and CanonicalJson can write must
// parse back to the same value, and writing that again must give the same bytes (the
// digest of a document never depends on how often it was written). The lenient readers
// share its depth cap: what it accepts they read the same, and a document too deep for
// one is too deep for all. Inputs may be nesting recipes (fuzz_util.h, ExpandNesting):
// a few bytes reach any depth.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_util.h"
#include "oci/canonical_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool::oci;
  const std::string doc = imgtool::fuzz::NestedInput(data, size);
  auto j = ParseJson(doc, "fuzz.json");
  auto lenient = ParseJsonLenient(doc, "fuzz.json");
  if (j.ok() && (!lenient.ok() || *lenient != *j || ParseJsonOrDiscarded(doc) != *j)) std::abort();
  if (!lenient.ok() && (j.ok() || j.error().message != lenient.error().message)) std::abort();
  if (!j.ok()) return 0;
  auto text = CanonicalJson(*j);
  if (!text.ok()) return 0;
  auto again = ParseJson(*text, "canonical");
  if (!again.ok() || *again != *j) std::abort();
  auto text2 = CanonicalJson(*again);
  if (!text2.ok() || *text2 != *text) std::abort();
  return 0;
}
