// The choice of cuDNN's fused batch normalization (detail/batch_norm_fusion.h).

#include <kusari/kernels/cuda/detail/batch_norm_fusion.h>

#include <kusari/core/memory_order.h>

namespace kusari::kernels::cuda {

std::optional<BatchNormFusion> batch_norm_fusion(const Array& x, bool residual, bool relu) {
  const bool half = x.dtype() == Dtype::float16 || x.dtype() == Dtype::bfloat16;
  if (!half && x.dtype() != Dtype::float32) return std::nullopt;
  if (x.ndim() < 2) return std::nullopt;
  const int64_t channels = x.shape()[1];
  if (x.size() == 0 || x.size() / channels < 2) return std::nullopt;
  if (x.size() >= kMostDnnElements || x.shape()[0] > kMostDnnBatch) return std::nullopt;
  BatchNormFusion f;
  // One channel is the row-major planes' bytes in either order: described as those.
  f.channels_last = x.ndim() == 4 && channels > 1 && memory_order_of(x) == MemoryOrder::channels_last;
  if (!f.channels_last && !x.is_contiguous()) return std::nullopt;
  // cuDNN's semi-persistent NHWC kernels take float16, bfloat16 and float32 (instances of each, the
  // fused ReLU's and residual's included); row-major float32 keeps the passes, as cuDNN's spatial
  // kernels for it (bfloat16's ran 20-40 ms a call on 2026-12-04) are not the ones to trust unmeasured.
  if (!half && !f.channels_last) return std::nullopt;
  f.persistent = f.channels_last;
  if (residual && !relu) return std::nullopt;
  if (relu) {
    if (!f.persistent || channels % 4 != 0) return std::nullopt;
    f.ops = residual ? FusedOps::batch_norm_add_relu : FusedOps::batch_norm_relu;
  }
  return f;
}

}  // namespace kusari::kernels::cuda
