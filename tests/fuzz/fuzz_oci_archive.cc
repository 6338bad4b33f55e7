// oci-archive extraction (imgtool/layout/oci_archive.h): a tar of an image layout from
// anywhere (skopeo, a download), unpacked into a folder with every path rule enforced.
// The input is written to a file (the function reads a path), extracted into a fresh
// folder, and the folder is emptied before the next input.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "layout/oci_archive.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool;
  std::string archive = fuzz::WriteInput(fuzz::Bytes(data, size), "input.tar");
  std::string dest = fuzz::FreshFolder("extracted");
  (void)layout::ExtractOciArchive(archive, dest);
  return 0;
}
