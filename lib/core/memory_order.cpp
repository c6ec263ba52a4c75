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

namespace {

// True when `array` has one channel, axis 1's stride is 1 and its planes have more than one element: the
// stride channels-last gives that axis, where row-major gives it the plane's size.
bool marked_channels_last(const Array& array) {
  if (array.ndim() < 3 || array.shape()[1] != 1 || array.strides()[1] != 1) return false;
  int64_t plane = 1;
  for (int64_t axis = 2; axis < array.ndim(); ++axis) plane *= array.shape()[axis];
  return plane > 1;
}

}  // namespace

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
  // A row-major array is channels-last only as one channel marked by its stride (dense in both orders).
  const bool channels_last = array.is_contiguous() ? marked_channels_last(array) : is_channels_last(array);
  return channels_last ? MemoryOrder::channels_last : MemoryOrder::row_major;
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
  const bool row_major = order == MemoryOrder::row_major;
  if (row_major ? !array.is_contiguous() : !is_channels_last(array)) {
    Array out = empty_in_order(array.shape(), order, array.dtype(), array.device());
    out.assign(array);
    return out;
  }
  if (memory_order_of(array) == order) return array;
  // Dense in both orders (one channel) but said in the other: the same bytes with the asked order's strides.
  const Strides strides = row_major ? contiguous_strides(array.shape()) : channels_last_strides(array.shape());
  return Array::from_storage(array.storage(), array.shape(), strides, array.offset(), array.dtype());
}

}  // namespace kusari
