#pragma once
// Internal to the backends, compiled for the host and (under nvcc) for the device: the geometry of a
// 2-D pooling over (H, W) planes, the window under an output position, and the rule that picks a
// max pooling's winner, so that the CPU's loops and the CUDA kernels pick the same element.

#include <algorithm>
#include <cstdint>

#include <kusari/core/detail/host_device.h>
#include <kusari/core/shape.h>
#include <kusari/kernels/ops/pooling.h>

namespace kusari::kernels {

// Extents of the input and output planes: the number of planes N * C, and H, W, oh, ow.
struct Planes {
  int64_t count, height, width, out_h, out_w;

  Planes(const Shape& input, const Shape& output)
      : count(input[0] * input[1]), height(input[2]), width(input[3]), out_h(output[2]), out_w(output[3]) {}
  // Elements of one input plane.
  KUSARI_HOST_DEVICE int64_t in_size() const { return height * width; }
  // Elements of one output plane.
  KUSARI_HOST_DEVICE int64_t out_size() const { return out_h * out_w; }
};

// Rows [y0, y1) and columns [x0, x1) of the input under output position (oy, ox), padding cut off.
struct Window {
  int64_t y0, y1, x0, x1;
};

// The window of output position (oy, ox).
KUSARI_HOST_DEVICE inline Window window_at(const Pool2dGeometry& g, const Planes& p, int64_t oy, int64_t ox) {
  const int64_t top = oy * g.stride_h - g.pad_h, left = ox * g.stride_w - g.pad_w;
  return {top > 0 ? top : 0, top + g.kernel_h < p.height ? top + g.kernel_h : p.height, left > 0 ? left : 0,
          left + g.kernel_w < p.width ? left + g.kernel_w : p.width};
}

// Whether value v, met after the current winner (best_index, -1 for none yet, of value best) in the
// window's row-major scan, takes its place: the first element, a larger one, or the first NaN.
template <class C>
KUSARI_HOST_DEVICE inline bool max_replaces(int64_t best_index, C v, C best) {
  return best_index < 0 || v > best || (v != v && best == best);
}

}  // namespace kusari::kernels
