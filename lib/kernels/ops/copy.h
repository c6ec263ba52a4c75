#pragma once
// Kernel contracts for moving elements: copy with dtype conversion, fill, and transfers between devices.

#include <kusari/core/api.h>
#include <kusari/core/array.h>

namespace kusari::kernel_ops {

// dst[...] = src[...] converted to dst's dtype; shapes equal (src may be a broadcast view).
struct KUSARI_API Copy {
  static constexpr const char* name = "copy";
  using Fn = void(const Array& src, const Array& dst);
};
// dst[...] = value.
struct KUSARI_API Fill {
  static constexpr const char* name = "fill";
  using Fn = void(const Array& dst, double value);
};
// Copies between host memory and this device type, or between two devices of this type (contiguous
// arrays of one dtype and shape); dispatched on the device that is not the host.
struct KUSARI_API Transfer {
  static constexpr const char* name = "transfer";
  using Fn = void(const Array& src, const Array& dst);
};

}  // namespace kusari::kernel_ops
