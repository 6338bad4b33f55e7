// Which toolchain built a binary the spec stages (issue 19: the build record names it, so
// a digest that moved because another compiler built the trainer says so). From a 64-bit
// little-endian ELF file: the strings of its .comment section ("GCC: (Debian
// 12.2.0-14+deb12u1) 12.2.0", one per compiler that contributed) and, when it carries CUDA
// device code, nvcc's identification from its .nv_fatbin ("Cuda compilation tools,
// release 13.0, V13.0.88"). Anything else (not ELF, 32-bit, big-endian, damaged) has no
// toolchain: an empty list, never an error, since the file is an input like any other.
// Every offset, size and count read from the file is bounded before it is used, and the
// reads together are at most twice the file's size whatever its headers say (sections
// naming the same bytes are read once; a budget covers overlapping ones).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "archive/layer.h"
#include "oci/reader.h"

namespace imgtool::build {

// `file` must support ReadAt; `size` is its length. Reads at most 2 * size bytes of it.
std::vector<std::string> ElfToolchain(oci::Reader& file, uint64_t size);
// The same for a file on disk (its last component not followed, never waited on: a
// symlink, FIFO or other non-regular file has none).
std::vector<std::string> ElfToolchainOf(const std::string& path);
// The same for a planned layer entry, opened as the layer opens it (archive::OpenSource).
std::vector<std::string> ElfToolchainOf(const archive::Entry& e);

}  // namespace imgtool::build
