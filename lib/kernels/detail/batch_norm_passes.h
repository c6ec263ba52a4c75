#pragma once
// Internal to lib/kernels: batch normalization as per-channel sums and affine maps (the routines'
// channel_sums and channel_affine), on any device. The CPU's BatchNormForward and BatchNormBackward
// kernels are these without a part_sum; the routines run them with one for a batch split across
// processes, on every device.

#include <kusari/kernels/layer_routines.h>

namespace kusari::ops::detail {

// BatchNormForward in two passes (channel_sums, then channel_affine). With part_sum, the sums (and the
// count) are the whole split batch's: one part_sum call on [Σx, Σx², count, 1, d, d²] (d: this part's
// statistics dtype as a number; with n parts n·Σd² = (Σd)² holds only when every d is equal, DtypeError
// otherwise).
BatchNormForwardResult batch_normalization_in_passes(const Array& x, const Array& gamma, const Array& beta,
                                                     const Array& residual, double eps, bool relu,
                                                     const PartSum& part_sum);
// BatchNormBackward in two passes (channel_sums of gy and gy·x, then channel_affine for gx). With part_sum,
// gx uses the whole batch's Σgy and Σgy·x̂ (one part_sum call); ggamma and gbeta stay this part's share.
BatchNormGradients batch_normalization_backward_in_passes(const Array& x, const Array& gamma, const Array& gy,
                                                          const Array& y, const BatchNormStatistics& statistics,
                                                          bool relu, bool need_gx, const PartSum& part_sum);

// BatchNormForward and BatchNormBackward as the two passes over one batch: the kernels of a backend that
// has no fused batch normalization of its own (the CPU's), or for the cases its own does not take (CUDA's).
BatchNormForwardResult batch_norm_forward_kernel(const Array& x, const Array& gamma, const Array& beta,
                                                 const Array& residual, double eps, bool relu);
BatchNormGradients batch_norm_backward_kernel(const Array& x, const Array& gamma, const Array& gy, const Array& y,
                                              const BatchNormStatistics& statistics, bool relu, bool need_gx);

}  // namespace kusari::ops::detail
