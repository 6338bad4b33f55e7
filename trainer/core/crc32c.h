// CRC32C (Castagnoli) and TFRecord's masked form, for TensorBoard event files.
// Table-driven and portable; event files are small, so speed does not matter here.
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainer {

uint32_t Crc32c(const void* data, size_t size);
// TFRecord stores ((crc >> 15) | (crc << 17)) + 0xa282ead8 so that a CRC over data that
// itself contains CRCs stays well distributed.
uint32_t MaskedCrc32c(const void* data, size_t size);

}  // namespace trainer
