// The build spec (imgtool/builder/spec.h): JSON a user hands `imgtool build`. ParseSpec
// checks everything that needs no disk, so any bytes may reach it; a spec that parses is
// then resolved for each of its platforms (spec_platforms.h), as the build does.
#include <cstddef>
#include <cstdint>
#include <string>

#include "builder/spec.h"
#include "builder/spec_platforms.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto spec = imgtool::build::ParseSpec(imgtool::fuzz::Bytes(data, size), "/fuzz", "spec.json");
  if (!spec.ok()) return 0;
  for (const auto& platform : imgtool::build::SpecPlatforms(*spec)) {
    (void)imgtool::build::ForPlatform(*spec, platform);
  }
  return 0;
}
