#pragma once
// Kernel contract of the counter-based random generator.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/core/array.h>

namespace kusari {

// Distributions the random kernel draws from.
enum class Distribution { uniform, normal, bernoulli };

}  // namespace kusari

namespace kusari::kernel_ops {

// out[i] = draw number `offset + i` of the stream `seed` (p0, p1: low/high, mean/stddev or p/unused).
struct KUSARI_API Random {
  static constexpr const char* name = "random";
  using Fn = void(Distribution distribution, uint64_t seed, uint64_t offset, double p0, double p1, const Array& out);
};

}  // namespace kusari::kernel_ops
