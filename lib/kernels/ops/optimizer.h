#pragma once
// Kernel contracts of optimizer steps over many parameters at once (multi-tensor): the momentum step
// of every parameter of a group in one call, the squared norms LARS scales its rates by, whether a
// step's gradients are all finite, and the conversions a group of half-precision parameters updates through (gradients widened to the float32
// master copies, the masters' new values written back).

#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/array.h>

namespace kusari {

// What a momentum step's velocity holds: the step itself (v = m·v - r·u, then w += v: Chainer's
// MomentumSGD) or the descent (v = m·v + r·u, then w -= v: LARS).
enum class VelocityForm { step, descent };

// The operands of a momentum step over P parameters: per tensor k, u = g[k] + weight_decay[k]·w[k]
// (u = g[k] where the decay is 0), then v[k] and w[k] as `form` says with momentum[k] and rate[k];
// w, v, g of one floating dtype on one device, each v[k] and g[k] of w[k]'s shape; rate (P,) float64 on
// that device (where LARS computed it, or the learning rates).
struct KUSARI_API MomentumTensors {
  std::vector<Array> w, v, g;
  std::vector<double> momentum, weight_decay;
  Array rate;
  VelocityForm form = VelocityForm::step;
};

}  // namespace kusari

namespace kusari::kernel_ops {

// The momentum step of every tensor of MomentumTensors (checked by the routine), in place.
struct KUSARI_API MomentumSteps {
  static constexpr const char* name = "momentum_steps";
  using Fn = void(const MomentumTensors& tensors);
};
// out[k] = Σ arrays[k]² over each array's elements, for P arrays of one floating dtype on one device;
// out (P,) contiguous, float64 for float64 arrays, float32 otherwise (the sums accumulate in it).
struct KUSARI_API SquaredNorms {
  static constexpr const char* name = "squared_norms";
  using Fn = void(const std::vector<Array>& arrays, const Array& out);
};

// out[()] = whether every element of every array is finite (no infinity, no NaN), for floating arrays
// of any dtypes on one device; out () bool on that device. The loss scaler's overflow check of a step's
// gradients: one call, one read of out.
struct KUSARI_API AllFinite {
  static constexpr const char* name = "all_finite";
  using Fn = void(const std::vector<Array>& arrays, const Array& out);
};

// destinations[k][...] = sources[k][...] converted to destinations[k]'s dtype, then, unless `divisor` is
// 1, divided by `divisor` as `destination / divisor` divides (the divisor a value of the destination's
// dtype, the quotient in its compute type), for P pairs of equal shapes and floating dtypes (any pair of
// them), all on one device; no destination overlaps a source (the pairs may run in any order).
struct KUSARI_API CopyTensors {
  static constexpr const char* name = "copy_tensors";
  using Fn = void(const std::vector<Array>& sources, const std::vector<Array>& destinations, double divisor);
};
// targets[k][...] += sources[k][...] converted to targets[k]'s dtype times `factor` (a value of that
// dtype), as `add_to(target, source.astype(target's dtype) * factor)` computes it (the product, then the
// sum, each in the dtype's compute type and rounded to it: weight decay), for P pairs as for CopyTensors,
// no two targets overlapping.
struct KUSARI_API AddScaledTensors {
  static constexpr const char* name = "add_scaled_tensors";
  using Fn = void(const std::vector<Array>& sources, const std::vector<Array>& targets, double factor);
};

}  // namespace kusari::kernel_ops
