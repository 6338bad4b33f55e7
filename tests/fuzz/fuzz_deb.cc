// Debian packages (imgtool/pkg): UnpackDeb on the input as a .deb file: the ar members,
// debian-binary, the control tarball and its stanza, the data tarball in each
// compression, every path rule; and the stanza parser alone on the same bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "pkg/package.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool;
  std::string_view bytes = fuzz::Bytes(data, size);
  std::string deb = fuzz::WriteInput(bytes, "input.deb");
  std::string staging = fuzz::FreshFolder("staging");
  pkg::UnpackLimits limits;
  limits.max_total_bytes = 64 << 20;  // a fuzzer's bomb costs memory and time, not a finding
  limits.max_entries = 4096;
  auto unpacked = pkg::UnpackDeb(deb, staging, limits, (size & 1) != 0);
  if (unpacked.ok()) {
    // The records dpkg reads are made from what the package said about itself.
    (void)pkg::DpkgStatusStanza(*unpacked);
    (void)pkg::DpkgList(*unpacked);
    (void)pkg::DpkgMd5sums(*unpacked);
    (void)pkg::DpkgInfoName(*unpacked);
  }
  (void)pkg::ParseStanza(std::string(bytes));
  return 0;
}
