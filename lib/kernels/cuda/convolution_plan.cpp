// How a convolution is put to cuDNN (detail/convolution_plan.h).

#include <kusari/kernels/cuda/detail/convolution_plan.h>

#include <algorithm>

namespace kusari::kernels::cuda {
namespace {

// cuDNN's output extent for an image extent (its formula; at least 0).
int64_t dnn_output(int64_t image, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  const int64_t reach = image + 2 * pad - ((kernel - 1) * dilation + 1);
  return reach < 0 ? 0 : reach / stride + 1;
}

}  // namespace

DnnExtent dnn_extent(int64_t image, int64_t output, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  // The image extent whose padded span ends exactly at the last window's last tap.
  const int64_t covering = (output - 1) * stride + (kernel - 1) * dilation + 1 - 2 * pad;
  const int64_t extended = std::max(image, covering);
  return {extended, std::max(output, dnn_output(extended, kernel, stride, pad, dilation))};
}

MemoryOrder dnn_pass_order(const Array& image) {
  const bool has_nhwc = image.dtype() != Dtype::float64;
  return has_nhwc && memory_order_of(image) == MemoryOrder::channels_last ? MemoryOrder::channels_last
                                                                          : MemoryOrder::row_major;
}

}  // namespace kusari::kernels::cuda
