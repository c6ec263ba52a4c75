#pragma once
// What the Eigen and xtensor views share: checking that an array can be viewed as host elements of
// one type, and building an array over memory that another library owns.

#include <cstdint>
#include <memory>
#include <vector>

#include <kusari/core/array.h>
#include <kusari/core/dtype.h>
#include <kusari/core/error.h>

namespace kusari::interop {

// Asks from_eigen / from_xtensor for a copy instead of an array sharing the source's memory.
struct Copy {};
// The tag value: from_eigen(m, interop::copy).
inline constexpr Copy copy{};

// The kusari dtype of a C++ element type (Eigen's half types add their own specializations).
template <class T>
struct ElementDtype {
  static constexpr Dtype value = dtype_of<T>();
};

// Throws unless `array` is defined, lives on the host and holds elements of `dtype`; `who` names the
// caller in the message.
inline void require_host_array(const Array& array, Dtype dtype, const char* who) {
  if (!array.defined()) throw ValueError(cat(who, ": expected a defined array, got an undefined one"));
  if (array.device().type != DeviceType::cpu) {
    throw DeviceError(cat(who, ": expected an array on the host (cpu), got one on ", array.device(),
                          "; copy it first with to(Device::cpu())"));
  }
  if (array.dtype() != dtype) {
    throw DtypeError(cat(who, ": expected an array of dtype ", dtype, " for the requested element type, got ",
                         array.dtype()));
  }
}

// Throws unless every stride of `array` is non-negative (neither Eigen nor xtensor adapts a pointer
// with steps backwards); `target` names the library in the message.
inline void require_forward_strides(const Array& array, const char* who, const char* target) {
  for (int64_t axis = 0; axis < array.ndim(); ++axis) {
    const int64_t stride = array.strides()[static_cast<size_t>(axis)];
    if (stride < 0 && array.shape()[axis] > 1) {
      throw ValueError(cat(who, ": ", target, " views need non-negative strides, got stride ", stride,
                           " on axis ", axis, " (make the array contiguous() first)"));
    }
  }
}

// An array over `count` elements of host memory at `data` that kusari does not own, with the given
// shape and element strides (non-negative). `owner` keeps the memory alive as long as any array
// views it; when null the caller must keep it alive instead.
inline Array array_over_host_memory(void* data, const Shape& shape, const std::vector<int64_t>& strides,
                                    Dtype dtype, std::shared_ptr<void> owner) {
  int64_t span = 1;
  for (int64_t axis = 0; axis < shape.ndim(); ++axis) {
    if (shape[axis] == 0) span = 0;
    if (span > 0) span += (shape[axis] - 1) * strides[static_cast<size_t>(axis)];
  }
  auto storage = std::make_shared<Storage>();
  storage->data = data;
  storage->nbytes = static_cast<size_t>(span) * itemsize(dtype);
  storage->device = Device::cpu();
  storage->owner = std::move(owner);
  Strides array_strides;
  const Strides row_major = contiguous_strides(shape);
  for (int64_t axis = 0; axis < shape.ndim(); ++axis) {
    // An axis of extent 1 takes the row-major stride, so such arrays still count as contiguous.
    const auto a = static_cast<size_t>(axis);
    array_strides.push_back(shape[axis] == 1 ? row_major[a] : strides[a]);
  }
  return Array::from_storage(std::move(storage), shape, array_strides, 0, dtype);
}

}  // namespace kusari::interop
