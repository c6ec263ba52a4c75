// The averaging policies' factors.

#include <kusari/distributed/detail/wire_scaling.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <kusari/core/error.h>
#include <kusari/kernels/routines.h>

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
  // ilogb: floor(log2(·)) exactly (the quotient is a normal number: max_abs is at most float's largest).
  const int exponent = std::clamp(std::ilogb(kHalfFloat16Range / (p * max_abs)), -kMaxExponent, kMaxExponent);
  const double before = std::ldexp(1.0, exponent);
  return {static_cast<float>(before), static_cast<float>(1 / (p * before))};
}

ScalingArrays automatic_float16_scaling(const Array& max_abs, int ranks) {
  if (max_abs.dtype() != Dtype::float32 || max_abs.ndim() != 0) {
    throw ValueError(cat("automatic_float16_scaling: expected a 0-dimensional float32 array, got ", max_abs.dtype(),
                         " of shape ", max_abs.shape()));
  }
  const Device device = max_abs.device();
  const double p = ranks;
  const auto constant = [&](double value) { return Array::scalar(value, Dtype::float64, device); };
  // The powers 2^-kMaxExponent .. 2^kMaxExponent; the largest not above the bound's quotient is
  // 2^clamp(floor(log2(quotient))), as averaging_scaling's exponent, with no logarithm.
  std::vector<double> powers;
  for (int e = -kMaxExponent; e <= kMaxExponent; ++e) powers.push_back(std::ldexp(1.0, e));
  const Array ladder = Array::from_vector(powers, {static_cast<int64_t>(powers.size())}, Dtype::float64, device);
  const Array largest = max_abs.astype(Dtype::float64);
  const Array quotient = ops::div(constant(kHalfFloat16Range), largest * p);  // inf for 0, 0 for inf
  const Array below = ops::less_equal(ladder, quotient);
  const Array before = ops::amax(ops::where(below, ladder, constant(powers.front())));
  const Array after = ops::reciprocal(before * p);
  // 0 keeps {1, 1/p}; inf (or NaN) keeps {1/p, 1}, so that it reaches every rank's result.
  const Array zero = ops::equal(largest, constant(0));
  const Array finite = ops::less_equal(largest, constant(std::numeric_limits<float>::max()));
  const Array prescale = ops::where(zero, constant(1), ops::where(finite, before, constant(1 / p)));
  const Array postscale = ops::where(zero, constant(1 / p), ops::where(finite, after, constant(1)));
  return {prescale.astype(Dtype::float32), postscale.astype(Dtype::float32)};
}

}  // namespace kusari::distributed
