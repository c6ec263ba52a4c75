#pragma once
// Array: a typed, strided view of device memory. Copies are cheap handles; views share storage.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/device.h>
#include <kusari/core/dtype.h>
#include <kusari/core/error.h>
#include <kusari/core/shape.h>

namespace kusari {

class Allocator;

// A block of device memory shared by every array that views it.
struct KUSARI_API Storage {
  void* data = nullptr;           // start of the block
  size_t nbytes = 0;              // bytes available
  Device device;                  // where the memory lives
  Allocator* allocator = nullptr; // returns `data` to this allocator on destruction, when set
  std::shared_ptr<void> owner;    // otherwise keeps memory owned elsewhere alive (may be null)

  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();
};

// A basic-slicing index component: start:stop:step, each optional as in Python.
struct KUSARI_API Slice {
  std::optional<int64_t> start;
  std::optional<int64_t> stop;
  int64_t step = 1;
};
// Inserts a new axis of extent 1 (numpy.newaxis).
struct KUSARI_API NewAxis {};
// Stands for as many full slices as needed (Python's ...).
struct KUSARI_API Ellipsis {};
// One component of a get_item index.
using Index = std::variant<int64_t, Slice, NewAxis, Ellipsis>;

// An n-dimensional array of one dtype on one device.
class KUSARI_API Array {
 public:
  // An undefined array (defined() is false); most operations on it throw.
  Array() = default;

  // An uninitialised contiguous array.
  static Array empty(const Shape& shape, Dtype dtype = Dtype::float32, Device device = default_device());
  // Filled with zeros.
  static Array zeros(const Shape& shape, Dtype dtype = Dtype::float32, Device device = default_device());
  // Filled with ones.
  static Array ones(const Shape& shape, Dtype dtype = Dtype::float32, Device device = default_device());
  // Filled with `value` converted to dtype.
  static Array full(const Shape& shape, double value, Dtype dtype = Dtype::float32, Device device = default_device());
  // A 0-dimensional array holding `value`.
  static Array scalar(double value, Dtype dtype = Dtype::float32, Device device = default_device());
  // start, start+step, ... below stop, as in numpy.arange.
  static Array arange(double start, double stop, double step = 1, Dtype dtype = Dtype::float32,
                      Device device = default_device());
  // Copies values into a new array of the given shape (and dtype, converting from T).
  template <class T>
  static Array from_vector(const std::vector<T>& values, const Shape& shape, std::optional<Dtype> dtype = {},
                           Device device = default_device());
  // Normally distributed values from the counter-based generator seeded with `seed`.
  static Array normal(const Shape& shape, double mean, double stddev, uint64_t seed, Dtype dtype = Dtype::float32,
                      Device device = default_device());
  // Uniform values in [low, high) from the counter-based generator seeded with `seed`.
  static Array uniform(const Shape& shape, double low, double high, uint64_t seed, Dtype dtype = Dtype::float32,
                       Device device = default_device());

  // A view of existing storage with the given layout (no copy; the caller keeps the layout in bounds).
  static Array from_storage(std::shared_ptr<Storage> storage, const Shape& shape, const Strides& strides,
                            int64_t offset, Dtype dtype);

  // True unless default-constructed.
  bool defined() const { return storage_ != nullptr; }
  // Extents of each axis.
  const Shape& shape() const { return shape_; }
  // Element strides of each axis.
  const Strides& strides() const { return strides_; }
  // Offset of element [0, ..., 0] from the start of storage, in elements.
  int64_t offset() const { return offset_; }
  // Element type.
  Dtype dtype() const { return dtype_; }
  // Device of the storage.
  const Device& device() const;
  // Number of axes.
  int64_t ndim() const { return shape_.ndim(); }
  // Number of elements.
  int64_t size() const { return shape_.numel(); }
  // Bytes the elements would take contiguously.
  int64_t nbytes() const { return size() * static_cast<int64_t>(itemsize(dtype_)); }
  // True when the elements are laid out in row-major order without gaps.
  bool is_contiguous() const;
  // The storage this array views (shared with its views).
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  // Address of element [0, ..., 0]; only meaningful to kernels of this array's device.
  void* raw_data() const;
  // Address of element [0, ..., 0] in host memory, for code that reads or writes the bytes itself (MPI
  // buffers, files, other libraries' views); throws DeviceError unless the array is on the CPU.
  void* host_data() const;
  // Typed host pointer to element [0, ..., 0]; throws unless the dtype is T and the device is the CPU.
  template <class T>
  T* data() const;

  // A view with another shape (one extent may be -1); copies when the strides do not allow a view.
  Array reshape(const Shape& shape) const;
  // A view with axes permuted (reversed when `axes` is empty).
  Array transpose(std::vector<int64_t> axes = {}) const;
  // A view broadcast to `shape` (stride 0 on repeated axes).
  Array broadcast_to(const Shape& shape) const;
  // A view selected by basic indexing (integers, slices, new axes, one ellipsis).
  Array get_item(const std::vector<Index>& index) const;
  // A view with an axis of extent 1 inserted at `axis`.
  Array expand_dims(int64_t axis) const;
  // A view without the given axes of extent 1 (all of them when `axes` is empty).
  Array squeeze(std::vector<int64_t> axes = {}) const;
  // A view onto arbitrary shape, strides and offset of the same storage (no bounds beyond storage size).
  Array as_strided(const Shape& shape, const Strides& strides, int64_t offset) const;

  // This array if contiguous, else a contiguous copy.
  Array contiguous() const;
  // A contiguous copy with its own storage.
  Array copy() const;
  // This array converted to dtype (a copy unless the dtype already matches and copy is false).
  Array astype(Dtype dtype, bool copy = false) const;
  // A copy on `device` (this array itself when it is already there).
  Array to(const Device& device) const;
  // Writes `value` to every element (in place, through views too).
  void fill(double value) const;
  // Copies src's elements (broadcast and converted as needed) into this array, in place.
  void assign(const Array& src) const;

  // The elements in row-major order, converted to T (copies device memory to the host).
  template <class T>
  std::vector<T> to_vector() const;
  // The single element of a size-1 array, converted to T.
  template <class T>
  T item() const;
  // NumPy-like text: "array([[1., 2.],\n       [3., 4.]], dtype=float32)".
  std::string to_string() const;

 private:
  Array(std::shared_ptr<Storage> storage, Shape shape, Strides strides, int64_t offset, Dtype dtype);
  void require_defined(const char* op) const {
    if (!storage_) throw_undefined(op);
  }
  [[noreturn]] static void throw_undefined(const char* op);

  std::shared_ptr<Storage> storage_;
  Shape shape_;
  Strides strides_;
  int64_t offset_ = 0;
  Dtype dtype_ = Dtype::float32;
};

// Prints Array::to_string().
KUSARI_API std::ostream& operator<<(std::ostream& out, const Array& array);

namespace detail {
// Host copy of src into a new array on `device` (used by from_vector).
KUSARI_API Array array_from_host(const void* data, Dtype src_dtype, const Shape& shape, Dtype dtype, const Device& device);
// Contiguous host bytes of `array` converted to `dtype` (used by to_vector).
KUSARI_API void array_to_host(const Array& array, Dtype dtype, void* out);
}  // namespace detail

template <class T>
Array Array::from_vector(const std::vector<T>& values, const Shape& shape, std::optional<Dtype> dtype, Device device) {
  if (static_cast<int64_t>(values.size()) != shape.numel()) {
    throw ShapeError(cat("Array::from_vector: expected ", shape.numel(), " values for shape ", shape, ", got ",
                         values.size()));
  }
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return detail::array_from_host(bytes.data(), Dtype::bool_, shape, dtype.value_or(Dtype::bool_), device);
  } else {
    return detail::array_from_host(values.data(), dtype_of<T>(), shape, dtype.value_or(dtype_of<T>()), device);
  }
}

template <class T>
T* Array::data() const {
  require_defined("Array::data");
  if (dtype_ != dtype_of<T>()) {
    throw DtypeError(cat("Array::data: expected dtype ", dtype_, ", asked for ", dtype_of<T>()));
  }
  if (device().type != DeviceType::cpu) {
    throw DeviceError(cat("Array::data: host pointer requested for an array on ", device()));
  }
  return static_cast<T*>(raw_data());
}

template <class T>
std::vector<T> Array::to_vector() const {
  require_defined("Array::to_vector");
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(static_cast<size_t>(size()));
    detail::array_to_host(*this, Dtype::bool_, bytes.data());
    return std::vector<bool>(bytes.begin(), bytes.end());
  } else {
    std::vector<T> out(static_cast<size_t>(size()));
    detail::array_to_host(*this, dtype_of<T>(), out.data());
    return out;
  }
}

template <class T>
T Array::item() const {
  if (size() != 1) throw ShapeError(cat("Array::item: expected an array of size 1, got shape ", shape_));
  return to_vector<T>()[0];
}

}  // namespace kusari
