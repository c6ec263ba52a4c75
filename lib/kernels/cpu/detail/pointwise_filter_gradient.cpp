#include <kusari/kernels/cpu/detail/pointwise_filter_gradient.h>

#include <kusari/core/memory_order.h>
#include <kusari/kernels/cpu/detail/dnnl_plan.h>

namespace kusari::kernels::cpu {

bool fits_pointwise_filter_gradient(const Array& x, const Array& gy, const Conv2dGeometry& g, const Array& gw) {
  const Shape &xs = x.shape(), &ys = gy.shape(), &ws = gw.shape();
  return x.dtype() == Dtype::float32 && gy.dtype() == Dtype::float32 && gw.dtype() == Dtype::float32 &&
         gw.is_contiguous() && ws[2] == 1 && ws[3] == 1 && g.groups == 1 && g.pad_h == 0 && g.pad_w == 0 &&
         (ys[2] - 1) * g.stride_h < xs[2] && (ys[3] - 1) * g.stride_w < xs[3] && xs[1] > 0 && ys[1] > 0 &&
         is_channels_last(x) && is_channels_last(gy);
}

void pointwise_filter_gradient(const Array& x, const Array& gy, const Conv2dGeometry& g, const Array& gw) {
  const Shape& ys = gy.shape();
  // x at the windows' positions, made dense channels-last (x itself at stride 1): rows of C channels.
  const Array sampled = in_order(x.get_item({Slice{}, Slice{}, Slice{0, (ys[2] - 1) * g.stride_h + 1, g.stride_h},
                                             Slice{0, (ys[3] - 1) * g.stride_w + 1, g.stride_w}}),
                                 MemoryOrder::channels_last);
  const int64_t positions = gy.size() / ys[1], outputs = ys[1], inputs = x.shape()[1];
  // gw (O, C) = gyᵀ (O, positions) · sampled (positions, C), row-major, through oneDNN's GEMM.
  onednn_sgemm('T', 'N', outputs, inputs, positions, 1.0f, static_cast<const float*>(gy.raw_data()), outputs,
               static_cast<const float*>(sampled.raw_data()), inputs, 0.0f, static_cast<float*>(gw.raw_data()), inputs,
               "pointwise_filter_gradient");
}

}  // namespace kusari::kernels::cpu
