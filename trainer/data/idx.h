// IDX files (LeCun's MNIST format), gzip-compressed as Fashion-MNIST ships them.
// Header: magic (0x00 0x00 type ndim), ndim big-endian u32 sizes, then the payload.
// We accept unsigned bytes (type 0x08) only, which is what (Fashion-)MNIST uses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace trainer {

struct IdxArray {
  std::vector<uint32_t> dims;  // e.g. {60000, 28, 28}
  std::vector<uint8_t> data;   // product(dims) bytes, row-major
};

// Reads a gzip (or plain) IDX file and checks it has exactly `expected_ndim` dimensions
// and that the payload length matches them. Errors name the file.
Result<IdxArray> ReadIdxGz(const std::string& path, int expected_ndim);

// Parses an already-decompressed IDX buffer; `name` is used in errors.
Result<IdxArray> ParseIdx(const std::string& bytes, int expected_ndim, const std::string& name);

}  // namespace trainer
