#include <kusari/core/shape.h>

#include <algorithm>
#include <ostream>
#include <sstream>

#include <kusari/core/error.h>

namespace kusari {

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

std::string Shape::to_string() const {
  std::ostringstream out;
  out << "(";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) out << ", ";
    out << dims_[i];
  }
  if (dims_.size() == 1) out << ",";
  out << ")";
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const Shape& shape) { return out << shape.to_string(); }

Strides contiguous_strides(const Shape& shape) {
  Strides strides(static_cast<size_t>(shape.ndim()));
  int64_t step = 1;
  int64_t reach = 1;  // the product of the non-zero extents, which bounds every stride
  for (int64_t i = shape.ndim() - 1; i >= 0; --i) {
    strides[static_cast<size_t>(i)] = step;
    if (__builtin_mul_overflow(reach, std::max<int64_t>(shape[i], 1), &reach)) {
      throw ShapeError(cat("shape ", shape, ": its extents multiply beyond what 64-bit strides hold"));
    }
    step *= shape[i];
  }
  return strides;
}

int64_t normalize_axis(int64_t axis, int64_t ndim, const char* op) {
  if (axis < -ndim || axis >= ndim) {
    throw IndexError(cat(op, ": expected an axis in [", -ndim, ", ", ndim, "), got ", axis));
  }
  return axis < 0 ? axis + ndim : axis;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  if (a == b) return a;
  const int64_t n = std::max(a.ndim(), b.ndim());
  Shape out;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.ndim() ? 1 : a[i - (n - a.ndim())];
    const int64_t db = i < n - b.ndim() ? 1 : b[i - (n - b.ndim())];
    if (da != db && da != 1 && db != 1) {
      throw ShapeError(cat(op, ": expected shapes that broadcast together, got ", a, " and ", b));
    }
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

}  // namespace kusari
