// Python wheels (imgtool/pkg): UnpackWheel on the input as a .whl file (the zip, every
// path rule, METADATA, RECORD and each file checked against it), and RECORD's CSV and
// METADATA's headers parsed alone from the same bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "pkg/package.h"
#include "pkg/wheel_internal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool;
  std::string_view bytes = fuzz::Bytes(data, size);
  std::string wheel = fuzz::WriteInput(bytes, "fuzz-1.0-py3-none-any.whl");
  std::string staging = fuzz::FreshFolder("staging");
  pkg::UnpackLimits limits;
  limits.max_total_bytes = 64 << 20;
  limits.max_entries = 4096;
  (void)pkg::UnpackWheel(wheel, staging, limits);
  std::string text(bytes);
  (void)pkg::internal::ParseRecord(text);
  pkg::WheelPackage w;
  (void)pkg::internal::ReadNameVersion(text, &w);
  std::string decoded;
  (void)pkg::internal::DecodeBase64Url(bytes, &decoded);
  return 0;
}
