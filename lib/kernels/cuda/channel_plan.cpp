// How an array is dense for the per-channel kernels (detail/channel_plan.h).

#include <kusari/kernels/cuda/detail/channel_plan.h>

#include <kusari/core/array.h>
#include <kusari/core/memory_order.h>

namespace kusari::kernels::cuda {

std::optional<ChannelExtents> dense_channel_extents(const Array& array) {
  const int64_t channels = array.shape()[1];
  if (array.is_contiguous()) return ChannelExtents{array.shape()[0], array.size() / (array.shape()[0] * channels)};
  if (is_channels_last(array)) return ChannelExtents{array.size() / channels, 1};
  return std::nullopt;
}

}  // namespace kusari::kernels::cuda
