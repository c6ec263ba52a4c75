#pragma once
// Internal to the CUDA backend: a cuDNN batch normalization's statistics in the contract's terms, from
// what its forward saved, in one launch (the routines took a dozen small ones a layer).

#include <kusari/core/array.h>
#include <kusari/kernels/ops/normalization.h>

namespace kusari::kernels::cuda {

// Sets s.mean and s.inv_std (float64 copies of cuDNN's saved float32 mean and inverse standard
// deviation), s.var = max(1 / inv_std² - eps, 0), s.scale = γ·inv_std and s.shift = β - mean·scale,
// float64 (C,) arrays on their device, from float32 (C,) contiguous gamma32 and beta32: the double
// arithmetic of batch_norm::statistics_of_sums' affine map in one kernel.
void statistics_from_saved(const Array& saved_mean, const Array& saved_inv_std, const Array& gamma32,
                           const Array& beta32, double eps, BatchNormStatistics& s);

}  // namespace kusari::kernels::cuda
