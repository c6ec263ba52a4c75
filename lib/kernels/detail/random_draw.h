#pragma once
// Internal to the backends, compiled for the host and (under nvcc) for the device: a pair of draws of
// the random kernel's distributions from the counter-based generator, so that every device fills an
// array with the same numbers for one seed and offset (normals up to the last bits of the libm each
// runs). The affine steps are explicit fused multiply-adds, one rounding on every device whatever its
// compiler contracts.

#include <array>
#include <cmath>
#include <cstdint>

#include <kusari/core/detail/philox.h>
#include <kusari/kernels/ops/random.h>

namespace kusari::kernels {

// Draws 2 * pair and 2 * pair + 1 of the stream `seed`: uniform in [p0, p1), normal with mean p0 and
// standard deviation p1, or bernoulli (1 with probability p0, else 0).
KUSARI_HOST_DEVICE inline std::array<double, 2> draw_pair(Distribution distribution, uint64_t seed, uint64_t pair,
                                                          double p0, double p1) {
  switch (distribution) {
    case Distribution::uniform: {
      const std::array<double, 2> u = detail::uniform_pair_of(seed, pair);
      return {std::fma(p1 - p0, u[0], p0), std::fma(p1 - p0, u[1], p0)};
    }
    case Distribution::normal: {
      const std::array<double, 2> z = detail::normal_pair_of(seed, pair);
      return {std::fma(p1, z[0], p0), std::fma(p1, z[1], p0)};
    }
    case Distribution::bernoulli: {
      const std::array<double, 2> u = detail::uniform_pair_of(seed, pair);
      return {u[0] < p0 ? 1.0 : 0.0, u[1] < p0 ? 1.0 : 0.0};
    }
  }
  return {0.0, 0.0};
}

// Whether a uniform draw rounded to the element type reached `high` (p1) itself: the kernels store
// `low` instead, keeping the range half-open.
KUSARI_HOST_DEVICE inline bool reached_high(Distribution distribution, double stored, double p0, double p1) {
  return distribution == Distribution::uniform && p0 < p1 && stored >= p1;
}

}  // namespace kusari::kernels
