// The averaging policies' factors.

#include <kusari/distributed/detail/wire_scaling.h>

#include <algorithm>
#include <cmath>

namespace kusari::distributed {
namespace {

// Half of float16's largest finite value: the bound on every partial sum under automatic.
constexpr double kHalfFloat16Range = 65504.0 / 2;
// automatic never scales by more than 2^±kMaxExponent (both factors stay normal float32 numbers).
constexpr int kMaxExponent = 60;

}  // namespace

bool needs_max_abs(AveragingPolicy policy, Dtype wire) {
  return policy == AveragingPolicy::automatic && wire == Dtype::float16;
}

WireScaling averaging_scaling(AveragingPolicy policy, Dtype wire, int ranks, float max_abs) {
  const double p = ranks;
  switch (policy) {
    case AveragingPolicy::divide_before: return {static_cast<float>(1 / p), 1};
    case AveragingPolicy::divide_after: return {1, static_cast<float>(1 / p)};
    case AveragingPolicy::split: {
      const double before = 1 / std::sqrt(p);
      return {static_cast<float>(before), static_cast<float>(1 / (p * before))};
    }
    case AveragingPolicy::automatic: break;
  }
  if (!needs_max_abs(policy, wire) || max_abs == 0) return {1, static_cast<float>(1 / p)};
  if (!std::isfinite(max_abs)) return {static_cast<float>(1 / p), 1};
  const int exponent = std::clamp(static_cast<int>(std::floor(std::log2(kHalfFloat16Range / (p * max_abs)))),
                                  -kMaxExponent, kMaxExponent);
  const double before = std::ldexp(1.0, exponent);
  return {static_cast<float>(before), static_cast<float>(1 / (p * before))};
}

}  // namespace kusari::distributed
