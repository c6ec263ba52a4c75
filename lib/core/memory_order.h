#pragma once
// Memory orders of (N, C, ...) arrays: row-major (NCHW), or channels-last, where the channels of one
// position are adjacent (the strides of NHWC on an NCHW-shaped array). Shapes never change with the
// order; kernels that care look at the strides, every other one just sees a strided array.

#include <kusari/core/api.h>
#include <kusari/core/array.h>

namespace kusari {

// How an array's elements are laid out in memory.
enum class MemoryOrder { row_major, channels_last };

// Strides (in elements) of a dense channels-last array of `shape` (axis 1 innermost, then the last
// axis, ..., axis 2, axis 0 outermost); row-major strides below 3 axes.
KUSARI_API Strides channels_last_strides(const Shape& shape);
// True when `array` has at least 2 axes and its elements are dense in channels-last order (extents of
// 1 may have any stride); a 2-axis row-major array and an array of one channel are dense in both orders.
KUSARI_API bool is_channels_last(const Array& array);
// True when the channels (axis 1) of `array` are its innermost axis, so that its memory is rows of C
// values: a row-major array of 2 axes, or one memory_order_of says is channels-last.
KUSARI_API bool has_channel_rows(const Array& array);
// channels_last when `array` is channels-last but not row-major, or one channel whose axis 1 has the
// stride channels-last gives it (1, where row-major gives the plane's size); row_major otherwise.
KUSARI_API MemoryOrder memory_order_of(const Array& array);
// An uninitialised dense array of `shape` in `order`.
KUSARI_API Array empty_in_order(const Shape& shape, MemoryOrder order, Dtype dtype = Dtype::float32,
                                Device device = default_device());
// `array` itself when it is dense in `order` and says it (memory_order_of), the same bytes with `order`'s
// strides when it is dense in both, else a copy in that order.
KUSARI_API Array in_order(const Array& array, MemoryOrder order);

}  // namespace kusari
