// The build spec (imgtool/build/spec.h): JSON a user hands `imgtool build`. ParseSpec
// checks everything that needs no disk, so any bytes may reach it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "build/spec.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)imgtool::build::ParseSpec(imgtool::fuzz::Bytes(data, size), "/fuzz", "spec.json");
  return 0;
}
