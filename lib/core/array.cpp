#include <kusari/core/array.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include <kusari/core/allocator.h>
#include <kusari/core/kernel_table.h>
#include <kusari/kernels/ops/copy.h>
#include <kusari/kernels/ops/random.h>

namespace kusari {

Array::Array(std::shared_ptr<Storage> storage, Shape shape, Strides strides, int64_t offset, Dtype dtype)
    : storage_(std::move(storage)), shape_(std::move(shape)), strides_(std::move(strides)), offset_(offset),
      dtype_(dtype) {}

void Array::throw_undefined(const char* op) {
  throw ValueError(cat(op, ": the array is undefined (default-constructed or released)"));
}

Array Array::empty(const Shape& shape, Dtype dtype, Device device) {
  for (int64_t d : shape) {
    if (d < 0) throw ShapeError(cat("Array::empty: expected non-negative extents, got ", shape));
  }
  auto storage = allocate_storage(device, static_cast<size_t>(shape.numel()) * itemsize(dtype));
  return Array(std::move(storage), shape, contiguous_strides(shape), 0, dtype);
}

Array Array::full(const Shape& shape, double value, Dtype dtype, Device device) {
  Array out = empty(shape, dtype, device);
  out.fill(value);
  return out;
}

Array Array::zeros(const Shape& shape, Dtype dtype, Device device) { return full(shape, 0.0, dtype, device); }

Array Array::ones(const Shape& shape, Dtype dtype, Device device) { return full(shape, 1.0, dtype, device); }

Array Array::scalar(double value, Dtype dtype, Device device) { return full(Shape{}, value, dtype, device); }

Array Array::arange(double start, double stop, double step, Dtype dtype, Device device) {
  if (step == 0) throw ValueError("Array::arange: expected a non-zero step, got 0");
  const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((stop - start) / step)));
  std::vector<double> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = start + static_cast<double>(i) * step;
  return from_vector(values, Shape{n}, dtype, device);
}

namespace {
Array random_array(Distribution distribution, const Shape& shape, double p0, double p1, uint64_t seed, Dtype dtype,
                   const Device& device) {
  Array out = Array::empty(shape, dtype, device);
  kernel_for<kernel_ops::Random>(device)(distribution, seed, 0, p0, p1, out);
  return out;
}
}  // namespace

Array Array::normal(const Shape& shape, double mean, double stddev, uint64_t seed, Dtype dtype, Device device) {
  return random_array(Distribution::normal, shape, mean, stddev, seed, dtype, device);
}

Array Array::uniform(const Shape& shape, double low, double high, uint64_t seed, Dtype dtype, Device device) {
  return random_array(Distribution::uniform, shape, low, high, seed, dtype, device);
}

const Device& Array::device() const {
  require_defined("Array::device");
  return storage_->device;
}

bool Array::is_contiguous() const {
  int64_t expected = 1;
  for (int64_t i = ndim() - 1; i >= 0; --i) {
    if (shape_[i] != 1 && strides_[static_cast<size_t>(i)] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

void* Array::raw_data() const {
  require_defined("Array::raw_data");
  return static_cast<char*>(storage_->data) + offset_ * static_cast<int64_t>(itemsize(dtype_));
}

void* Array::host_data() const {
  require_defined("Array::host_data");
  if (device().type != DeviceType::cpu) {
    throw DeviceError(cat("Array::host_data: expected an array in host memory, got one on ", device(),
                          " (transfer it with to(Device::cpu()) first)"));
  }
  return raw_data();
}

Array Array::as_strided(const Shape& shape, const Strides& strides, int64_t offset) const {
  require_defined("Array::as_strided");
  if (static_cast<int64_t>(strides.size()) != shape.ndim()) {
    throw ShapeError(cat("Array::as_strided: expected ", shape.ndim(), " strides for shape ", shape, ", got ",
                         strides.size()));
  }
  return Array(storage_, shape, strides, offset, dtype_);
}

Array Array::reshape(const Shape& requested) const {
  require_defined("Array::reshape");
  std::vector<int64_t> dims = requested.dims();
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (inferred >= 0) throw ShapeError(cat("reshape: expected at most one -1 in ", requested));
      inferred = static_cast<int64_t>(i);
    } else if (dims[i] < 0) {
      throw ShapeError(cat("reshape: expected non-negative extents, got ", requested));
    } else {
      known *= dims[i];
    }
  }
  if (inferred >= 0) {
    if (known == 0 || size() % known != 0) {
      throw ShapeError(cat("reshape: cannot reshape an array of shape ", shape_, " into ", requested));
    }
    dims[static_cast<size_t>(inferred)] = size() / known;
  }
  Shape target(std::move(dims));
  if (target.numel() != size()) {
    throw ShapeError(cat("reshape: cannot reshape an array of shape ", shape_, " (", size(), " elements) into ",
                         requested, " (", target.numel(), " elements)"));
  }
  if (is_contiguous()) return Array(storage_, target, contiguous_strides(target), offset_, dtype_);
  return contiguous().reshape(target);
}

Array Array::transpose(std::vector<int64_t> axes) const {
  require_defined("Array::transpose");
  const int64_t n = ndim();
  if (axes.empty()) {
    for (int64_t i = n - 1; i >= 0; --i) axes.push_back(i);
  }
  if (static_cast<int64_t>(axes.size()) != n) {
    throw IndexError(cat("transpose: expected ", n, " axes for shape ", shape_, ", got ", axes.size()));
  }
  std::vector<bool> seen(static_cast<size_t>(n), false);
  std::vector<int64_t> dims(static_cast<size_t>(n));
  Strides strides(static_cast<size_t>(n));
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalize_axis(axes[i], n, "transpose");
    if (seen[static_cast<size_t>(a)]) throw IndexError(cat("transpose: axis ", axes[i], " repeated"));
    seen[static_cast<size_t>(a)] = true;
    dims[i] = shape_[a];
    strides[i] = strides_[static_cast<size_t>(a)];
  }
  return Array(storage_, Shape(std::move(dims)), std::move(strides), offset_, dtype_);
}

Array Array::broadcast_to(const Shape& target) const {
  require_defined("Array::broadcast_to");
  if (target == shape_) return *this;
  const int64_t lead = target.ndim() - ndim();
  if (lead < 0) {
    throw ShapeError(cat("broadcast_to: cannot broadcast shape ", shape_, " to fewer axes ", target));
  }
  Strides strides(static_cast<size_t>(target.ndim()), 0);
  for (int64_t i = 0; i < ndim(); ++i) {
    if (shape_[i] == target[i + lead]) {
      strides[static_cast<size_t>(i + lead)] = strides_[static_cast<size_t>(i)];
    } else if (shape_[i] != 1) {
      throw ShapeError(cat("broadcast_to: cannot broadcast shape ", shape_, " to ", target));
    }
  }
  return Array(storage_, target, std::move(strides), offset_, dtype_);
}

Array Array::get_item(const std::vector<Index>& index) const {
  require_defined("Array::get_item");
  int64_t consumed = 0;
  bool has_ellipsis = false;
  for (const Index& i : index) {
    if (std::holds_alternative<int64_t>(i) || std::holds_alternative<Slice>(i)) ++consumed;
    if (std::holds_alternative<Ellipsis>(i)) {
      if (has_ellipsis) throw IndexError("get_item: expected at most one ellipsis, got two");
      has_ellipsis = true;
    }
  }
  if (consumed > ndim()) {
    throw IndexError(cat("get_item: too many indices (", consumed, ") for an array of shape ", shape_));
  }
  std::vector<int64_t> dims;
  Strides strides;
  int64_t offset = offset_;
  int64_t axis = 0;
  auto take_full = [&](int64_t count) {
    for (int64_t k = 0; k < count; ++k, ++axis) {
      dims.push_back(shape_[axis]);
      strides.push_back(strides_[static_cast<size_t>(axis)]);
    }
  };
  for (const Index& i : index) {
    if (const auto* integer = std::get_if<int64_t>(&i)) {
      const int64_t extent = shape_[axis];
      if (*integer < -extent || *integer >= extent) {
        throw IndexError(cat("get_item: index ", *integer, " out of range for axis ", axis, " of extent ", extent));
      }
      offset += (*integer < 0 ? *integer + extent : *integer) * strides_[static_cast<size_t>(axis)];
      ++axis;
    } else if (const auto* slice = std::get_if<Slice>(&i)) {
      const int64_t extent = shape_[axis];
      const int64_t step = slice->step;
      if (step == 0) throw ValueError("get_item: slice step cannot be zero");
      auto clamp = [&](std::optional<int64_t> v, int64_t fallback) {
        if (!v) return fallback;
        int64_t x = *v < 0 ? *v + extent : *v;
        return step > 0 ? std::clamp<int64_t>(x, 0, extent) : std::clamp<int64_t>(x, -1, extent - 1);
      };
      const int64_t start = clamp(slice->start, step > 0 ? 0 : extent - 1);
      const int64_t stop = clamp(slice->stop, step > 0 ? extent : -1);
      const int64_t count = step > 0 ? std::max<int64_t>(0, (stop - start + step - 1) / step)
                                     : std::max<int64_t>(0, (start - stop - step - 1) / -step);
      if (count > 0) offset += start * strides_[static_cast<size_t>(axis)];
      dims.push_back(count);
      strides.push_back(strides_[static_cast<size_t>(axis)] * step);
      ++axis;
    } else if (std::holds_alternative<NewAxis>(i)) {
      dims.push_back(1);
      strides.push_back(0);
    } else {
      take_full(ndim() - consumed);
    }
  }
  take_full(ndim() - axis);
  return Array(storage_, Shape(std::move(dims)), std::move(strides), offset, dtype_);
}

Array Array::expand_dims(int64_t axis) const {
  require_defined("Array::expand_dims");
  axis = normalize_axis(axis, ndim() + 1, "expand_dims");
  std::vector<int64_t> dims = shape_.dims();
  Strides strides = strides_;
  dims.insert(dims.begin() + axis, 1);
  strides.insert(strides.begin() + axis, 0);
  return Array(storage_, Shape(std::move(dims)), std::move(strides), offset_, dtype_);
}

Array Array::squeeze(std::vector<int64_t> axes) const {
  require_defined("Array::squeeze");
  std::vector<bool> drop(static_cast<size_t>(ndim()), false);
  if (axes.empty()) {
    for (int64_t i = 0; i < ndim(); ++i) drop[static_cast<size_t>(i)] = shape_[i] == 1;
  }
  for (int64_t a : axes) {
    const int64_t axis = normalize_axis(a, ndim(), "squeeze");
    if (shape_[axis] != 1) {
      throw ShapeError(cat("squeeze: expected axis ", a, " of extent 1, got ", shape_[axis], " in shape ", shape_));
    }
    drop[static_cast<size_t>(axis)] = true;
  }
  std::vector<int64_t> dims;
  Strides strides;
  for (int64_t i = 0; i < ndim(); ++i) {
    if (drop[static_cast<size_t>(i)]) continue;
    dims.push_back(shape_[i]);
    strides.push_back(strides_[static_cast<size_t>(i)]);
  }
  return Array(storage_, Shape(std::move(dims)), std::move(strides), offset_, dtype_);
}

Array Array::contiguous() const {
  require_defined("Array::contiguous");
  return is_contiguous() ? *this : copy();
}

Array Array::copy() const { return astype(dtype_, true); }

Array Array::astype(Dtype dtype, bool force_copy) const {
  require_defined("Array::astype");
  if (dtype == dtype_ && !force_copy) return *this;
  Array out = empty(shape_, dtype, device());
  kernel_for<kernel_ops::Copy>(device())(*this, out);
  return out;
}

Array Array::to(const Device& target) const {
  require_defined("Array::to");
  if (target == device()) return *this;
  Array src = contiguous();
  Array out = empty(shape_, dtype_, target);
  const Device& other = target.type == DeviceType::cpu ? device() : target;
  kernel_for<kernel_ops::Transfer>(other)(src, out);
  return out;
}

void Array::fill(double value) const {
  require_defined("Array::fill");
  kernel_for<kernel_ops::Fill>(device())(*this, value);
}

void Array::assign(const Array& src) const {
  require_defined("Array::assign");
  src.require_defined("Array::assign");
  if (!(src.device() == device())) {
    throw DeviceError(cat("Array::assign: expected a source on ", device(), ", got one on ", src.device()));
  }
  // A source sharing this storage may overlap the destination; read it from a private copy then.
  const Array source = src.storage() == storage_ ? src.copy() : src;
  kernel_for<kernel_ops::Copy>(device())(source.broadcast_to(shape_), *this);
}

Array Array::from_storage(std::shared_ptr<Storage> storage, const Shape& shape, const Strides& strides,
                          int64_t offset, Dtype dtype) {
  if (!storage) throw ValueError("Array::from_storage: expected storage, got null");
  return Array(std::move(storage), shape, strides, offset, dtype);
}

namespace detail {
namespace {
// A host array over memory the caller owns.
Array wrap_host(void* data, Dtype dtype, const Shape& shape) {
  auto storage = std::make_shared<Storage>();
  storage->data = data;
  storage->nbytes = static_cast<size_t>(shape.numel()) * itemsize(dtype);
  storage->device = Device::cpu();
  return Array::from_storage(std::move(storage), shape, contiguous_strides(shape), 0, dtype);
}
}  // namespace

Array array_from_host(const void* data, Dtype src_dtype, const Shape& shape, Dtype dtype, const Device& device) {
  return wrap_host(const_cast<void*>(data), src_dtype, shape).astype(dtype, true).to(device);
}

void array_to_host(const Array& array, Dtype dtype, void* out) {
  kernel_for<kernel_ops::Copy>(Device::cpu())(array.to(Device::cpu()), wrap_host(out, dtype, array.shape()));
}

}  // namespace detail
}  // namespace kusari
