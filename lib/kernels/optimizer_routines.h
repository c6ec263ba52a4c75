#pragma once
// Device-independent routines of optimizer steps over many parameters at once: each checks its
// operands and calls the kernel registered for their device, one call for all of them (for the pairs
// of copy_tensors and add_scaled_tensors, one call a device).

#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/array.h>
#include <kusari/kernels/ops/optimizer.h>

namespace kusari::ops {

// The momentum step of every tensor of `tensors` in place (kernel_ops::MomentumSteps); throws ShapeError,
// DtypeError or DeviceError naming the first tensor that does not fit the others.
KUSARI_API void momentum_steps(const MomentumTensors& tensors);
// Σ a² of each array as a (P,) array on their device: float64 for float64 arrays, float32 otherwise.
KUSARI_API Array squared_norms(const std::vector<Array>& arrays);
// Whether every element of every array is finite, as a () bool array on their device (kernel_ops::
// AllFinite; the CPU's, a true one, where there are no floating arrays): integer and bool arrays are
// finite; throws DeviceError naming two arrays on different devices.
KUSARI_API Array all_finite(const std::vector<Array>& arrays);
// destinations[k] = sources[k] converted (and divided by `divisor`, a finite non-zero number, unless it is
// 1), for every k, no destination overlapping a source, each pair on one device (kernel_ops::CopyTensors,
// one call a device); throws ShapeError, DtypeError or DeviceError naming the first pair that does not
// fit, ValueError for another divisor.
KUSARI_API void copy_tensors(const std::vector<Array>& sources, const std::vector<Array>& destinations,
                             double divisor = 1);
// targets[k] += sources[k] (converted) · factor, for every k (kernel_ops::AddScaledTensors, one call a
// device; the pairs as copy_tensors takes them, no two targets overlapping); throws as copy_tensors does,
// ValueError for a factor that is not finite.
KUSARI_API void add_scaled_tensors(const std::vector<Array>& sources, const std::vector<Array>& targets,
                                   double factor);
// Each of the floating `arrays` as dtypes[k], as astype gives it: the array itself where it has that dtype
// (or is undefined), else a row-major copy, the copies made together (copy_tensors).
KUSARI_API std::vector<Array> astype_together(const std::vector<Array>& arrays, const std::vector<Dtype>& dtypes);

namespace detail {
// The kernels as the per-tensor routines compute them, tensor by tensor (the CPU's MomentumSteps and
// SquaredNorms, to the bit what a parameter's own update computes).
void momentum_steps_one_by_one(const MomentumTensors& tensors);
void squared_norms_one_by_one(const std::vector<Array>& arrays, const Array& out);
void copy_tensors_one_by_one(const std::vector<Array>& sources, const std::vector<Array>& destinations,
                             double divisor);
void add_scaled_tensors_one_by_one(const std::vector<Array>& sources, const std::vector<Array>& targets,
                                   double factor);
// The CPU's AllFinite: each array's bits scanned for an exponent of all ones.
void all_finite_scan(const std::vector<Array>& arrays, const Array& out);
}  // namespace detail

}  // namespace kusari::ops
