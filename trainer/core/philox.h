// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11):
// a counter-based generator. Every random number is a pure function of (key, counter),
// so shuffles and dropout masks depend only on (seed, epoch, step, sample index) - never
// on how many workers there are or where a run resumed. There is no generator state to
// save in a checkpoint beyond the seed.
#pragma once

#include <array>
#include <cstdint>

// The CUDA backend draws dropout masks on the device with these same functions (nvcc
// compiles them for both sides; std::array's constexpr members need
// --expt-relaxed-constexpr there). For the host compiler the macro is empty.
#if defined(__CUDACC__)
#define TRAINER_HOST_DEVICE __host__ __device__
#else
#define TRAINER_HOST_DEVICE
#endif

namespace trainer {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

TRAINER_HOST_DEVICE inline PhiloxCounter Philox4x32(PhiloxCounter c, PhiloxKey k) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // round multipliers
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // key schedule (Weyl)
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t{kM0} * c[0];
    uint64_t p1 = uint64_t{kM1} * c[2];
    PhiloxCounter n = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
                       static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
    c = n;
    k[0] += kW0;
    k[1] += kW1;
  }
  return c;
}

TRAINER_HOST_DEVICE inline PhiloxKey KeyFromSeed(uint64_t seed) {
  return {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
}

// Streams: the first counter word holds (stream << 24 | block) so the uses never overlap.
enum class RngStream : uint32_t { kInit = 1, kShuffle = 2, kDropout = 3 };

TRAINER_HOST_DEVICE inline uint32_t StreamWord(RngStream s, uint32_t block) {
  return (static_cast<uint32_t>(s) << 24) | (block & 0xffffffu);
}

// Uniform float in [0, 1) from the top 24 bits: exact, no rounding surprises.
TRAINER_HOST_DEVICE inline float UniformFloat(uint32_t bits) {
  return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f);
}

}  // namespace trainer
