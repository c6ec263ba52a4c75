// NumPy-like text for arrays: aligned columns, summarised with "..." past 1000 elements.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>

#include <kusari/core/array.h>

namespace kusari {
namespace {

constexpr int64_t kSummariseAbove = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr size_t kLineWidth = 75;

// Trims "1.500000" to "1.5" and "2.000" to "2." as NumPy does.
std::string trim_fixed(std::string text) {
  const size_t dot = text.find('.');
  if (dot == std::string::npos) return text;
  size_t end = text.size();
  while (end > dot + 1 && text[end - 1] == '0') --end;
  return text.substr(0, end);
}

std::string format_fixed(double v, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
  return trim_fixed(buffer);
}

std::string format_scientific(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.8e", v);
  std::string text = buffer;
  const size_t e = text.find('e');
  std::string mantissa = trim_fixed(text.substr(0, e));
  std::string exponent = text.substr(e + 1);  // like "+05" or "-123"
  return mantissa + "e" + exponent;
}

// Formats every element to strings of equal width.
class ElementFormatter {
 public:
  ElementFormatter(const std::vector<double>& values, Dtype dtype) : dtype_(dtype) {
    if (!is_floating(dtype)) return;
    double max_abs = 0, min_abs = INFINITY;
    for (double v : values) {
      if (!std::isfinite(v)) continue;
      max_abs = std::max(max_abs, std::fabs(v));
      if (v != 0) min_abs = std::min(min_abs, std::fabs(v));
    }
    scientific_ = max_abs >= 1e8 || (min_abs < 1e-4 && min_abs > 0) || (min_abs > 0 && max_abs / min_abs > 1e3);
  }

  std::string operator()(double v) const {
    if (dtype_ == Dtype::bool_) return v != 0 ? "True" : "False";
    if (!is_floating(dtype_)) return std::to_string(static_cast<int64_t>(v));
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return scientific_ ? format_scientific(v) : format_fixed(v, 8);
  }

 private:
  Dtype dtype_;
  bool scientific_ = false;
};

struct Printer {
  const Shape& shape;
  const std::vector<std::string>& cells;  // formatted, padded, in row-major order
  const Strides strides = contiguous_strides(shape);
  bool summarise;

  void print(std::ostream& out, int64_t axis, int64_t offset, const std::string& indent) const {
    if (axis == shape.ndim()) {
      out << cells[static_cast<size_t>(offset)];
      return;
    }
    const int64_t n = shape[axis];
    const bool innermost = axis == shape.ndim() - 1;
    out << "[";
    size_t line = indent.size() + 1;
    for (int64_t i = 0; i < n; ++i) {
      if (summarise && n > 2 * kEdgeItems && i == kEdgeItems) {
        out << (innermost ? "..., " : cat("...,\n", blank_lines(axis), indent, " "));
        line = indent.size() + 6;
        i = n - kEdgeItems - 1;
        continue;
      }
      if (innermost) {
        const std::string& cell = cells[static_cast<size_t>(offset + i * strides[static_cast<size_t>(axis)])];
        if (i > 0 && line + cell.size() + 2 > kLineWidth) {
          out << "\n" << indent << " ";
          line = indent.size() + 1;
        }
        out << cell;
        line += cell.size() + 2;
        if (i + 1 < n) out << ", ";
      } else {
        print(out, axis + 1, offset + i * strides[static_cast<size_t>(axis)], indent + " ");
        if (i + 1 < n) out << ",\n" << blank_lines(axis) << indent << " ";
      }
    }
    out << "]";
  }

  std::string blank_lines(int64_t axis) const {
    return std::string(static_cast<size_t>(std::max<int64_t>(0, shape.ndim() - axis - 2)), '\n');
  }
};

// Pads cells to one width; fixed-point floats align on their decimal point as NumPy does.
void align(std::vector<std::string>& cells, bool floating) {
  size_t int_width = 0, frac_width = 0;
  auto split = [](const std::string& c) {
    const size_t dot = c.find('.');
    const bool fixed = dot != std::string::npos && c.find('e') == std::string::npos;
    return fixed ? dot : c.size();
  };
  for (const std::string& c : cells) {
    const size_t at = split(c);
    int_width = std::max(int_width, at);
    frac_width = std::max(frac_width, c.size() - at);
  }
  for (std::string& c : cells) {
    const size_t at = floating ? split(c) : c.size();
    c = std::string(int_width - at, ' ') + c;
    if (floating) c += std::string(frac_width - (c.size() - int_width), ' ');
  }
}

}  // namespace

std::string Array::to_string() const {
  if (!defined()) return "array(undefined)";
  const std::vector<double> values = to_vector<double>();
  const bool summarise = size() > kSummariseAbove;
  const ElementFormatter format(values, dtype_);
  std::vector<std::string> cells(values.size());
  for (size_t i = 0; i < values.size(); ++i) cells[i] = format(values[i]);
  align(cells, is_floating(dtype_));
  std::ostringstream out;
  out << "array(";
  if (ndim() == 0) {
    out << cells[0];
  } else {
    Printer{shape_, cells, contiguous_strides(shape_), summarise}.print(out, 0, 0, "      ");
  }
  if (dtype_ != Dtype::float64 && dtype_ != Dtype::int64 && dtype_ != Dtype::bool_) {
    out << ", dtype=" << dtype_name(dtype_);
  }
  out << ")";
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const Array& array) { return out << array.to_string(); }

}  // namespace kusari
