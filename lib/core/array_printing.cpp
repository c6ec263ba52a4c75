// Array::to_string as numpy.array_repr with the default print options: lines wrapped at 75 columns,
// arrays of more than 1000 elements summarised to their first and last 3 items per axis with "...".

#include <ostream>

#include <kusari/core/array.h>
#include <kusari/core/detail/element_format.h>

namespace kusari {
namespace {

constexpr int64_t kThreshold = 1000;  // more elements than this are summarised
constexpr int64_t kEdgeItems = 3;     // items shown at each end of a summarised axis
constexpr size_t kLineWidth = 75;
const std::string kPrefix = "array(";

// The indices shown along each axis: all, or the first and last kEdgeItems when summarising.
std::vector<std::vector<int64_t>> shown_indices(const Shape& shape, bool summarise) {
  std::vector<std::vector<int64_t>> shown;
  for (int64_t extent : shape) {
    std::vector<int64_t> indices;
    for (int64_t i = 0; i < extent; ++i) {
      if (!summarise || extent <= 2 * kEdgeItems || i < kEdgeItems || i >= extent - kEdgeItems) indices.push_back(i);
    }
    shown.push_back(std::move(indices));
  }
  return shown;
}

// The shown elements in row-major order, converted to T.
template <class T>
std::vector<T> shown_values(const Array& array, const std::vector<std::vector<int64_t>>& shown) {
  const std::vector<T> all = array.to_vector<T>();
  const Strides strides = contiguous_strides(array.shape());
  std::vector<T> out;
  auto visit = [&](auto&& self, size_t axis, int64_t offset) -> void {
    if (axis == shown.size()) {
      out.push_back(all[static_cast<size_t>(offset)]);
      return;
    }
    for (int64_t i : shown[axis]) self(self, axis + 1, offset + i * strides[axis]);
  };
  visit(visit, 0, 0);
  return out;
}

// Element texts of one width, formatted from the shown elements only (as NumPy does).
std::vector<std::string> format_cells(const Array& array, const std::vector<std::vector<int64_t>>& shown) {
  if (is_floating(array.dtype())) return detail::format_floating(shown_values<double>(array, shown), array.dtype());
  const std::vector<int64_t> values = shown_values<int64_t>(array, shown);
  if (array.dtype() == Dtype::bool_) return detail::format_bools(values, array.ndim() == 0);
  return detail::format_integers(values);
}

// Appends `word` to `line`, first moving `line` to `text` and starting a new one when it would pass `width`.
void extend_line(std::string& text, std::string& line, const std::string& word, size_t width,
                 const std::string& indent) {
  if (line.size() + word.size() > width && line.size() > indent.size()) {
    text += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
    line = indent;
  }
  line += word;
}

// Nested brackets of the shown cells (numpy's _formatArray): rows wrap, deeper axes add blank lines.
class NestedText {
 public:
  NestedText(const std::vector<std::string>& cells, const Shape& shape, const std::vector<std::vector<int64_t>>& shown)
      : cells_(cells), shape_(shape) {
    for (const auto& indices : shown) extents_.push_back(static_cast<int64_t>(indices.size()));
    strides_ = contiguous_strides(Shape(extents_));
  }

  // The text of the sub-array at `offset` from `axis` on; `indent` starts every continuation line.
  std::string format(size_t axis, int64_t offset, const std::string& indent, size_t width) const {
    if (axis == extents_.size()) return cells_[static_cast<size_t>(offset)];
    std::string text;
    const std::vector<int64_t> items = items_of(axis);
    if (axis + 1 == extents_.size()) {
      std::string line = indent;
      for (size_t k = 0; k < items.size(); ++k) {
        extend_line(text, line, word(axis, offset, items[k], indent, width), width - 1, indent);
        if (k + 1 < items.size()) line += ", ";
      }
      text += line;
    } else {
      const std::string separator = std::string(",").append(extents_.size() - axis - 1, '\n');
      for (size_t k = 0; k < items.size(); ++k) {
        text += indent + word(axis, offset, items[k], indent, width);
        if (k + 1 < items.size()) text += separator;
      }
    }
    return std::string("[").append(text, indent.size()).append("]");
  }

 private:
  // Positions shown along `axis`, with -1 where "..." stands for the hidden middle.
  std::vector<int64_t> items_of(size_t axis) const {
    std::vector<int64_t> items;
    const bool summarised = extents_[axis] < shape_[static_cast<int64_t>(axis)];
    for (int64_t i = 0; i < extents_[axis]; ++i) {
      if (summarised && i == kEdgeItems) items.push_back(-1);
      items.push_back(i);
    }
    return items;
  }

  // The text of item `item` along `axis` ("..." for -1), one level deeper.
  std::string word(size_t axis, int64_t offset, int64_t item, const std::string& indent, size_t width) const {
    if (item < 0) return "...";
    return format(axis + 1, offset + item * strides_[axis], indent + " ", width - 1);
  }

  const std::vector<std::string>& cells_;
  const Shape& shape_;
  std::vector<int64_t> extents_;
  Strides strides_;
};

// Whether NumPy leaves the dtype out of the repr (the default float, int and bool types, when not empty).
bool dtype_implied(const Array& array) {
  const Dtype d = array.dtype();
  return array.size() > 0 && (d == Dtype::float64 || d == Dtype::int64 || d == Dtype::bool_);
}

}  // namespace

std::string Array::to_string() const {
  if (!defined()) return "array(undefined)";
  std::string text = kPrefix;
  if (size() == 0) {
    text += ndim() == 1 ? "[]" : "[], shape=" + shape_.to_string();
  } else {
    const auto shown = shown_indices(shape_, size() > kThreshold);
    const std::vector<std::string> cells = format_cells(*this, shown);
    // One column is kept for the "," or ")" that follows the brackets.
    text += NestedText(cells, shape_, shown).format(0, 0, std::string(kPrefix.size() + 1, ' '), kLineWidth - 1);
  }
  if (dtype_implied(*this)) return text + ")";
  text += ",";
  const std::string dtype_text = "dtype=" + dtype_name(dtype_) + ")";
  const size_t last_line = text.size() - (text.rfind('\n') + 1);
  if (last_line + dtype_text.size() + 1 > kLineWidth) {
    text.append("\n").append(kPrefix.size(), ' ');  // the dtype goes on a line of its own
  } else {
    text += ' ';
  }
  return text + dtype_text;
}

std::ostream& operator<<(std::ostream& out, const Array& array) { return out << array.to_string(); }

}  // namespace kusari
