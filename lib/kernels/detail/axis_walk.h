#pragma once
// Internal to the backends, compiled for the host and (under nvcc) for the device: the offsets of the
// elements of a row-major walk over some axes of an array, one after another, by carrying from the last
// axis to the first as an odometer does (no division: a GPU divides integers in software).

#include <cstdint>

#include <kusari/core/detail/host_device.h>

namespace kusari::kernels {

// A walk over `axes` (at most MaxAxes) axes of these extents under these strides, row-major: `offset`
// is the current element's, next() moves to the following one.
template <int MaxAxes>
class AxisWalk {
 public:
  KUSARI_HOST_DEVICE AxisWalk(int axes, const int64_t* extents, const int64_t* strides)
      : axes_(axes), extents_(extents), strides_(strides) {
    for (int d = 0; d < axes; ++d) index_[d] = 0;
  }
  // The offset of the current element.
  KUSARI_HOST_DEVICE int64_t offset() const { return offset_; }
  // Moves to the next element in row-major order (past the last: back to the first).
  KUSARI_HOST_DEVICE void next() {
    for (int d = axes_ - 1; d >= 0; --d) {
      offset_ += strides_[d];
      if (++index_[d] < extents_[d]) return;
      offset_ -= extents_[d] * strides_[d];
      index_[d] = 0;
    }
  }

 private:
  int axes_;
  const int64_t* extents_;
  const int64_t* strides_;
  int64_t index_[MaxAxes > 0 ? MaxAxes : 1];
  int64_t offset_ = 0;
};

}  // namespace kusari::kernels
