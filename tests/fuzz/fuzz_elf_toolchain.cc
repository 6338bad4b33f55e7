// The toolchain of a staged binary (imgtool/build/elf_toolchain.h): the section table,
// section names, .comment and .nv_fatbin of any file a spec stages, read with offsets,
// sizes and counts the file declares. Any bytes may reach it; every string it returns is
// printable and bounded.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "build/elf_toolchain.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(imgtool::fuzz::Bytes(data, size));
  imgtool::oci::StringReader reader(bytes);
  for (const auto& s : imgtool::build::ElfToolchain(reader, bytes.size())) {
    if (s.empty() || s.size() > 200) std::abort();
    for (char c : s) {
      if (c < 0x20 || c > 0x7e) std::abort();
    }
  }
  return 0;
}
