#pragma once
// Internal to the CUDA backend, and plain C++ so that the host suite tests it in every build: how a
// convolution the CPU accepts is put to cuDNN (convolution.cpp). cuDNN derives a pass's output extent
// from its image extent by one formula, floor((image + 2 pad - span) / stride) + 1, and refuses any
// other pair (CUDNN_STATUS_BAD_PARAM); kusari's geometries also include Chainer's cover_all windows and
// a deconvolution's outsize. Each axis is therefore given to cuDNN at extents that fit the formula:
// the image extended by zeros past its end, the output computed larger and cropped (or, for a gradient,
// read from zeros past its end). And the memory order a pass runs in: cuDNN 9 on sm90 has no float64
// channels-last filter-gradient algorithm (seen on an H200, 2026-12-04), so float64 runs row-major.

#include <cstdint>

#include <kusari/core/array.h>
#include <kusari/core/memory_order.h>

namespace kusari::kernels::cuda {

// One spatial axis of a convolution as cuDNN is given it: the image extent (at least the real one,
// zeros past it) and the output extent (at least the real one; cropped, or zeros past it for gy).
struct DnnExtent {
  int64_t image = 0;
  int64_t output = 0;
};

// The extents at which cuDNN computes an axis of `image` elements whose convolution has `output`
// windows of `kernel` taps every `stride` from -pad, `dilation` apart: the real ones where cuDNN's
// formula maps one to the other, else the image extended to cover the last window and the output
// cuDNN's formula gives for it. Requires output >= 1 and a kernel span within the padded extension.
DnnExtent dnn_extent(int64_t image, int64_t output, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation);

// The memory order a cuDNN pass runs in, for the image operand `image`: channels-last for a
// channels-last image of float32, float16 or bfloat16, row-major for anything else.
MemoryOrder dnn_pass_order(const Array& image);

}  // namespace kusari::kernels::cuda
