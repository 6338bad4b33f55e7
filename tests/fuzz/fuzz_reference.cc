// Image references (imgtool/ref/reference.h ParseReference): oci:, oci-archive: and
// docker:// with docker/distribution's grammar and Docker Hub's short names. Whatever is
// accepted prints a canonical text that parses back to the same reference.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_util.h"
#include "ref/docker_name.h"
#include "ref/reference.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool;
  std::string text(fuzz::Bytes(data, size));
  auto r = ref::ParseReference(text);
  if (r.ok()) {
    auto again = ref::ParseReference(r->str());
    if (!again.ok() || !(*again == *r)) std::abort();
  }
  (void)ref::ParseDockerName(text);
  return 0;
}
