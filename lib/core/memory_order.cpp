#include <kusari/core/memory_order.h>

#include <kusari/core/allocator.h>

namespace kusari {

Strides channels_last_strides(const Shape& shape) {
  if (shape.ndim() < 3) return contiguous_strides(shape);
  Strides strides(static_cast<size_t>(shape.ndim()));
  int64_t step = 1;
  strides[1] = step;
  step *= shape[1];
  for (int64_t axis = shape.ndim() - 1; axis >= 2; --axis) {
    strides[static_cast<size_t>(axis)] = step;
    step *= shape[axis];
  }
  strides[0] = step;
  return strides;
}

bool is_channels_last(const Array& array) {
  if (array.ndim() < 2) return false;
  const Strides expected = channels_last_strides(array.shape());
  for (int64_t axis = 0; axis < array.ndim(); ++axis) {
    const auto i = static_cast<size_t>(axis);
    if (array.shape()[axis] != 1 && array.strides()[i] != expected[i]) return false;
  }
  return true;
}

MemoryOrder memory_order_of(const Array& array) {
  return is_channels_last(array) && !array.is_contiguous() ? MemoryOrder::channels_last : MemoryOrder::row_major;
}

bool has_channel_rows(const Array& array) {
  return array.ndim() == 2 ? array.is_contiguous() : memory_order_of(array) == MemoryOrder::channels_last;
}

Array empty_in_order(const Shape& shape, MemoryOrder order, Dtype dtype, Device device) {
  if (order == MemoryOrder::row_major) return Array::empty(shape, dtype, device);
  for (int64_t d : shape) {
    if (d < 0) throw ShapeError(cat("empty_in_order: expected non-negative extents, got ", shape));
  }
  auto storage = allocate_storage(device, static_cast<size_t>(shape.numel()) * itemsize(dtype));
  return Array::from_storage(std::move(storage), shape, channels_last_strides(shape), 0, dtype);
}

Array in_order(const Array& array, MemoryOrder order) {
  if (order == MemoryOrder::row_major) return array.contiguous();
  if (is_channels_last(array)) return array;
  Array out = empty_in_order(array.shape(), order, array.dtype(), array.device());
  out.assign(array);
  return out;
}

}  // namespace kusari
