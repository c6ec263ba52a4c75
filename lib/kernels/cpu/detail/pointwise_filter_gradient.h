#pragma once
// Internal to the CPU backend: the filter gradient of a 1x1 convolution over channels-last float32
// arrays as one matrix product through oneDNN's GEMM, gw (O, C) = gy (N·oh·ow, O)ᵀ · x sampled at the
// stride (N·oh·ow, C). oneDNN's own 1x1 filter-gradient primitive splits this reduction across threads
// with barriers that cost milliseconds on a shared 2-core machine; the GEMM does not, and on one thread
// it is as fast or faster on both ResNets' shapes.

#include <kusari/kernels/ops/convolution.h>

namespace kusari::kernels::cpu {

// True when gw = x ⋆ gy is a 1x1 convolution's filter gradient that pointwise_filter_gradient computes:
// float32, one group, no padding, every window inside x, and x and gy channels-last.
bool fits_pointwise_filter_gradient(const Array& x, const Array& gy, const Conv2dGeometry& geometry, const Array& gw);
// gw = the correlation of x with gy for a problem that fits_pointwise_filter_gradient accepts.
void pointwise_filter_gradient(const Array& x, const Array& gy, const Conv2dGeometry& geometry, const Array& gw);

}  // namespace kusari::kernels::cpu
