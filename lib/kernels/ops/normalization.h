#pragma once
// Kernel contracts of batch normalization's two passes: per-channel sums, then a per-channel affine map.

#include <kusari/core/api.h>
#include <kusari/core/array.h>
#include <kusari/core/channel_gate.h>

namespace kusari::kernel_ops {

// Per channel c of (N, C, ...) arrays x and y of one shape, floating dtype and memory order (row-major,
// or with channel rows: has_channel_rows in core/memory_order.h; the gate's input too):
// sums[c] = Σ x and products[c] = Σ x·y over every axis but 1, x gated, accumulated into float64 (C,).
struct KUSARI_API ChannelSums {
  static constexpr const char* name = "channel_sums";
  using Fn = void(const Array& x, const Array& y, const ChannelGate& gate, const Array& sums, const Array& products);
};
// out = a[c]·x + b[c]·y + d[c] per channel c of (N, C, ...) arrays of one dtype and memory order (as for
// ChannelSums; out too), x gated (y may be undefined, then b is too), then max(out, 0) when relu (NaN
// stays); a, b, d float64 (C,).
struct KUSARI_API ChannelAffine {
  static constexpr const char* name = "channel_affine";
  using Fn = void(const Array& x, const Array& a, const Array& y, const Array& b, const Array& d,
                  const ChannelGate& gate, bool relu, const Array& out);
};

}  // namespace kusari::kernel_ops
