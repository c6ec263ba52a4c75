#include <kusari/kernels/cpu/pointwise_filter_gradient.h>

#include <kusari/core/memory_order.h>

namespace kusari::kernels::cpu {
namespace {

// The (rows, columns) matrix over the memory of a dense channels-last (N, columns, H, W) array.
Array channel_rows(const Array& a) {
  const int64_t columns = a.shape()[1];
  return a.as_strided(Shape{a.size() / columns, columns}, Strides{columns, 1}, a.offset());
}

}  // namespace

bool fits_pointwise_filter_gradient(const Array& x, const Array& gy, const Conv2dGeometry& g, const Array& gw) {
  const Shape &xs = x.shape(), &ys = gy.shape(), &ws = gw.shape();
  return x.dtype() == Dtype::float32 && gy.dtype() == Dtype::float32 && gw.dtype() == Dtype::float32 &&
         gw.is_contiguous() && ws[2] == 1 && ws[3] == 1 && g.groups == 1 && g.pad_h == 0 && g.pad_w == 0 &&
         (ys[2] - 1) * g.stride_h < xs[2] && (ys[3] - 1) * g.stride_w < xs[3] && xs[1] > 0 && ys[1] > 0 &&
         is_channels_last(x) && is_channels_last(gy);
}

void pointwise_filter_gradient(const Array& x, const Array& gy, const Conv2dGeometry& g, const Array& gw) {
  const Shape& ys = gy.shape();
  // x at the windows' positions, made dense channels-last (a view of x itself at stride 1).
  const Array sampled = in_order(x.get_item({Slice{}, Slice{}, Slice{0, (ys[2] - 1) * g.stride_h + 1, g.stride_h},
                                             Slice{0, (ys[3] - 1) * g.stride_w + 1, g.stride_w}}),
                                 MemoryOrder::channels_last);
  const Array out = gw.reshape(Shape{gw.shape()[0], gw.shape()[1]});
  kernel_for<kernel_ops::Gemm>(Device::cpu())(channel_rows(gy), true, channel_rows(sampled), false, 1, 0, out);
}

}  // namespace kusari::kernels::cpu
