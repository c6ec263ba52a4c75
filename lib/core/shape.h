#pragma once
// Shape of an array, strides in elements, and axis normalisation.

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/small_vector.h>

namespace kusari {

// The extent of each axis of an array.
class KUSARI_API Shape {
 public:
  Shape() = default;
  // From a braced list of extents: Shape{2, 3}.
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  // From a vector of extents.
  explicit Shape(const std::vector<int64_t>& dims) : dims_(dims.begin(), dims.end()) {}
  // From a range of extents.
  Shape(const int64_t* first, const int64_t* last) : dims_(first, last) {}

  // Number of axes.
  int64_t ndim() const { return static_cast<int64_t>(dims_.size()); }
  // Number of elements (1 for a 0-dimensional shape).
  int64_t numel() const;
  // Extent of axis i (no bounds check).
  int64_t operator[](int64_t i) const { return dims_[static_cast<size_t>(i)]; }
  // Mutable extent of axis i.
  int64_t& operator[](int64_t i) { return dims_[static_cast<size_t>(i)]; }
  // The extents as a vector.
  std::vector<int64_t> dims() const { return dims_.to_vector(); }
  auto begin() const { return dims_.begin(); }
  auto end() const { return dims_.end(); }
  // Appends an axis of extent n.
  void push_back(int64_t n) { dims_.push_back(n); }
  // "(2, 3)" as NumPy prints shapes.
  std::string to_string() const;
  bool operator==(const Shape& other) const { return dims_ == other.dims_; }

 private:
  SmallVector<int64_t, 8> dims_;
};

// Element strides of each axis (may be zero for broadcast axes or negative for reversed views).
using Strides = SmallVector<int64_t, 8>;

// Prints the shape as "(2, 3)".
KUSARI_API std::ostream& operator<<(std::ostream& out, const Shape& shape);
// Row-major (C-order) strides of a shape.
KUSARI_API Strides contiguous_strides(const Shape& shape);
// Maps a possibly negative axis into [0, ndim); throws IndexError naming `op` when out of range.
KUSARI_API int64_t normalize_axis(int64_t axis, int64_t ndim, const char* op);
// NumPy broadcasting of two shapes; throws ShapeError naming `op` when they do not broadcast.
KUSARI_API Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

}  // namespace kusari
