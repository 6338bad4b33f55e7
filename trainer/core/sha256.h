// Sha256 of a byte buffer via OpenSSL EVP: the weights digest and checkpoint checksums.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace trainer {

using Sha256Bytes = std::array<uint8_t, 32>;

Sha256Bytes Sha256(const void* data, size_t size);
std::string HexOf(const Sha256Bytes& digest);

}  // namespace trainer
