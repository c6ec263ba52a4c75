#pragma once
// Internal: the counter-based generator's arithmetic (Philox4x32-10, its words as uniforms in [0, 1)
// and Box-Muller's normals), compiled for the host and (under nvcc) for the device, so that both
// backends draw the same numbers for one seed and position (the normals to the last few bits of each
// side's log, sin and cos). core/random.h is the public face.

#include <array>
#include <cmath>
#include <cstdint>

#include <kusari/core/detail/host_device.h>

namespace kusari::detail {

// Philox4x32-10 applied to one counter under one key.
KUSARI_HOST_DEVICE constexpr std::array<uint32_t, 4> philox_rounds(std::array<uint32_t, 4> c,
                                                                   std::array<uint32_t, 2> k) {
  constexpr uint64_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = kMul0 * c[0];
    const uint64_t p1 = kMul1 * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
    k[0] += kWeyl0;
    k[1] += kWeyl1;
  }
  return c;
}

// The block of stream `seed` at counter `index`.
KUSARI_HOST_DEVICE constexpr std::array<uint32_t, 4> philox_block(uint64_t seed, uint64_t index) {
  return philox_rounds({static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), 0, 0},
                       {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
}

// 53 random bits from two words, as a double in [0, 1).
KUSARI_HOST_DEVICE constexpr double unit_from_words(uint32_t hi, uint32_t lo) {
  return static_cast<double>((static_cast<uint64_t>(hi) << 21) ^ (lo >> 11)) * 0x1.0p-53;
}

// The uniforms in [0, 1) at indices 2 * pair and 2 * pair + 1 of the stream `seed`.
KUSARI_HOST_DEVICE constexpr std::array<double, 2> uniform_pair_of(uint64_t seed, uint64_t pair) {
  const std::array<uint32_t, 4> r = philox_block(seed, pair);
  return {unit_from_words(r[0], r[1]), unit_from_words(r[2], r[3])};
}

// The standard normals Box-Muller makes of that pair of uniforms.
KUSARI_HOST_DEVICE inline std::array<double, 2> normal_pair_of(uint64_t seed, uint64_t pair) {
  const std::array<double, 2> u = uniform_pair_of(seed, pair);
  const double radius = std::sqrt(-2.0 * std::log(1.0 - u[0]));  // 1 - u in (0, 1]: the log is finite
  const double angle = 2.0 * M_PI * u[1];
  return {radius * std::cos(angle), radius * std::sin(angle)};
}

}  // namespace kusari::detail
