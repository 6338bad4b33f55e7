// The toolchain of a staged binary (imgtool/builder/elf_toolchain.h): the section table,
// section names, .comment and .nv_fatbin of any file a spec stages, read with offsets,
// sizes and counts the file declares. Any bytes may reach it; every string it returns is
// printable and bounded, and the bytes it reads are at most twice the file's size
// whatever its section headers repeat (issue 24: 4,096 headers over one 8 MiB read 32 GiB).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "builder/elf_toolchain.h"
#include "fuzz_util.h"

namespace {

// The file, counting every byte read from it.
class CountingReader : public imgtool::oci::Reader {
 public:
  explicit CountingReader(std::string bytes) : inner_(std::move(bytes)) {}
  imgtool::Result<size_t> Read(void* buf, size_t n) override { return Count(inner_.Read(buf, n)); }
  bool CanReadAt() const override { return true; }
  imgtool::Result<size_t> ReadAt(uint64_t offset, void* buf, size_t n) override {
    return Count(inner_.ReadAt(offset, buf, n));
  }
  uint64_t bytes = 0;

 private:
  imgtool::Result<size_t> Count(imgtool::Result<size_t> got) {
    if (got.ok()) bytes += *got;
    return got;
  }
  imgtool::oci::StringReader inner_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  CountingReader reader{std::string(imgtool::fuzz::Bytes(data, size))};
  for (const auto& s : imgtool::build::ElfToolchain(reader, size)) {
    if (s.empty() || s.size() > 200) std::abort();
    for (char c : s) {
      if (c < 0x20 || c > 0x7e) std::abort();
    }
  }
  if (reader.bytes > 2 * static_cast<uint64_t>(size)) std::abort();
  return 0;
}
