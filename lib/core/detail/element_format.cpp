// NumPy's element formatting (numpy/core/arrayprint.py: FloatingFormat in "maxprec" mode, IntegerFormat,
// BoolFormat) rebuilt on std::to_chars, which gives shortest and correctly rounded digits.

#include <kusari/core/detail/element_format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>

namespace kusari::detail {
namespace {

constexpr int kPrecision = 8;  // the most fractional digits NumPy shows by default

// A decimal number: its sign, significant digits d0 d1 d2 ..., and the power of ten of d0.
struct Decimal {
  bool negative = false;
  std::string digits;
  int exponent = 0;
};

// Reads std::to_chars' scientific text, such as "-1.25e-05".
Decimal parse_scientific(std::string_view text) {
  Decimal d;
  if (text.front() == '-') {
    d.negative = true;
    text.remove_prefix(1);
  }
  const size_t e = text.find('e');
  for (char c : text.substr(0, e)) {
    if (c != '.') d.digits += c;
  }
  const size_t exponent_start = e + (text[e + 1] == '+' ? 2 : 1);
  std::from_chars(text.data() + exponent_start, text.data() + text.size(), d.exponent);
  return d;
}

// `value` in scientific notation: correctly rounded to `decimals` fractional digits or, without
// `decimals`, the shortest text that reads back as the same F.
template <class F>
std::string scientific_text(F value, std::optional<int> decimals = std::nullopt) {
  char buffer[64];
  const auto result = decimals ? std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific,
                                               *decimals)
                               : std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  return std::string(buffer, static_cast<size_t>(result.ptr - buffer));
}

// Reads a decimal text as a double.
double parse_double(const std::string& text) {
  double value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// Removes trailing zero digits, keeping at least one digit.
void trim_zeros(Decimal& d) {
  while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
}

// Digit generation for one positive float16 or bfloat16 value as NumPy's Dragon4 does it: cut after
// some digits, the truncated decimal is taken when it lies in the value's rounding interval, the
// rounded-up one when that does, and the nearer one otherwise or when both do. The interval is closed
// for an even mantissa (round-half-even reads its ends back as the value).
class HalfDigits {
 public:
  HalfDigits(double magnitude, Dtype dtype) : magnitude_(magnitude) {
    const double below = step(-1, dtype);
    double above = step(1, dtype);
    if (std::isinf(above)) above = magnitude + (magnitude - below);  // past the largest finite value
    low_ = (below + magnitude) / 2;
    high_ = (magnitude + above) / 2;
    even_ = (dtype == Dtype::float16 ? float16_t(magnitude).bits : bfloat16_t(magnitude).bits) % 2 == 0;
    exponent_ = parse_scientific(scientific_text(magnitude)).exponent;
  }

  // The digits cut `decimals` places after the first significant one; `unique` tells whether they
  // identify the value (the truncated or the rounded-up decimal lies in the rounding interval).
  Decimal at(int decimals, bool& unique) const {
    const std::string nearest = scientific_text(magnitude_, decimals);
    const double nearest_value = parse_double(nearest);
    unique = true;
    if (nearest_value == magnitude_) return parse_scientific(nearest);
    const double unit = std::pow(10.0, exponent_ - decimals);
    const std::string other = scientific_text(nearest_value < magnitude_ ? nearest_value + unit
                                                                          : nearest_value - unit, decimals);
    const bool nearest_is_down = nearest_value < magnitude_;
    const std::string& down = nearest_is_down ? nearest : other;
    const std::string& up = nearest_is_down ? other : nearest;
    const bool low = even_ ? parse_double(down) >= low_ : parse_double(down) > low_;
    const bool high = even_ ? parse_double(up) <= high_ : parse_double(up) < high_;
    unique = low || high;
    if (low != high) return parse_scientific(low ? down : up);
    return parse_scientific(nearest);
  }

  // The fewest digits that identify the value.
  Decimal shortest() const {
    for (int decimals = 0;; ++decimals) {
      bool unique = false;
      Decimal d = at(decimals, unique);
      if (unique) {
        trim_zeros(d);  // a round-up carry ("9.99" -> "10.0") leaves zeros Dragon4 does not print
        return d;
      }
    }
  }

 private:
  // The value `steps` bit patterns away from this one.
  double step(int steps, Dtype dtype) const {
    if (dtype == Dtype::float16) {
      float16_t h(magnitude_);
      h.bits = static_cast<uint16_t>(h.bits + steps);
      return static_cast<float>(h);
    }
    bfloat16_t b(magnitude_);
    b.bits = static_cast<uint16_t>(b.bits + steps);
    return static_cast<float>(b);
  }

  double magnitude_, low_ = 0, high_ = 0;
  bool even_ = false;
  int exponent_ = 0;
};

// Whether dtype is one of the 16-bit floating types.
bool is_half(Dtype dtype) { return dtype == Dtype::float16 || dtype == Dtype::bfloat16; }

// Applies the sign of `value` to digits of its magnitude.
Decimal with_sign(Decimal d, double value) {
  d.negative = std::signbit(value);
  return d;
}

// The shortest digits that identify `value` in `dtype`.
Decimal shortest(double value, Dtype dtype) {
  if (value == 0) return Decimal{std::signbit(value), "0", 0};
  if (is_half(dtype)) return with_sign(HalfDigits(std::fabs(value), dtype).shortest(), value);
  if (dtype == Dtype::float32) return parse_scientific(scientific_text(static_cast<float>(value)));
  return parse_scientific(scientific_text(value));
}

// Exactly `decimals` digits after the first significant one: the shortest digits when they are that
// many, else (Dragon4 going on past them) the value rounded there.
Decimal digits_with(double value, Dtype dtype, int decimals) {
  if (value != 0 && is_half(dtype)) {
    bool unique = false;
    return with_sign(HalfDigits(std::fabs(value), dtype).at(decimals, unique), value);
  }
  const Decimal d = shortest(value, dtype);
  if (static_cast<int>(d.digits.size()) - 1 == decimals) return d;
  return parse_scientific(scientific_text(value, decimals));
}

// Digits after the point when `d` is written positionally.
int positional_decimals(const Decimal& d) {
  return std::max(0, static_cast<int>(d.digits.size()) - 1 - d.exponent);
}

// `d`, whose digits reach at least the units place, written positionally: "-0.00125", "12.", "3.5".
std::string positional_text(const Decimal& d) {
  std::string text = d.negative ? "-" : "";
  if (d.exponent >= 0) {
    const size_t integer_digits = static_cast<size_t>(d.exponent) + 1;
    text.append(d.digits, 0, integer_digits);
    text += '.';
    text.append(d.digits, integer_digits);
  } else {
    text += "0.";
    text.append(static_cast<size_t>(-d.exponent - 1), '0');
    text += d.digits;
  }
  return text;
}

// `value` rounded to `decimals` fractional digits, trailing zeros dropped ("2.5", "16544.").
std::string rounded_positional(double value, int decimals) {
  char buffer[64];
  const char* end = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, decimals).ptr;
  std::string text(buffer, static_cast<size_t>(end - buffer));
  if (decimals == 0) return text + ".";
  while (text.back() == '0') text.pop_back();
  return text;
}

// Positional text: the shortest digits, except that every integer digit is exact (NumPy's Dragon4
// prints 16544 for that float16, not 16540) and at most kPrecision decimals are shown.
std::string positional_element(double value, Dtype dtype) {
  const Decimal d = shortest(value, dtype);
  if (d.exponent >= static_cast<int>(d.digits.size())) return rounded_positional(value, 0);
  if (positional_decimals(d) <= kPrecision) return positional_text(d);
  return rounded_positional(value, kPrecision);
}

// The digits scientific notation needs: shortest, or rounded to kPrecision decimals (zeros trimmed).
Decimal scientific_digits(double value, Dtype dtype) {
  Decimal d = shortest(value, dtype);
  if (static_cast<int>(d.digits.size()) - 1 > kPrecision) {
    d = parse_scientific(scientific_text(value, kPrecision));
    trim_zeros(d);
  }
  return d;
}

// `value` with `decimals` fractional digits and at least `exponent_digits` exponent digits: "1.50e-05".
std::string scientific_element(double value, Dtype dtype, int decimals, int exponent_digits) {
  const Decimal d = digits_with(value, dtype, decimals);
  const std::string exponent = std::to_string(std::abs(d.exponent));
  std::string text = d.negative ? "-" : "";
  text += d.digits.front();
  text += '.';
  text.append(d.digits, 1);
  text += d.exponent < 0 ? "e-" : "e+";
  text.append(static_cast<size_t>(std::max(0, exponent_digits - static_cast<int>(exponent.size()))), '0');
  return text + exponent;
}

// max / min computed in `dtype`'s own arithmetic, as NumPy divides two scalars of that dtype.
double ratio_in_dtype(double max_value, double min_value, Dtype dtype) {
  const float ratio = static_cast<float>(max_value) / static_cast<float>(min_value);
  switch (dtype) {
    case Dtype::float16: return static_cast<float>(float16_t(ratio));
    case Dtype::bfloat16: return static_cast<float>(bfloat16_t(ratio));
    case Dtype::float32: return ratio;
    default: return max_value / min_value;
  }
}

// NumPy switches every element to scientific notation for huge, tiny or widely spread magnitudes.
bool use_scientific(const std::vector<double>& finite, Dtype dtype) {
  double max_value = 0, min_value = INFINITY;
  for (double v : finite) {
    if (v == 0) continue;
    max_value = std::max(max_value, std::fabs(v));
    min_value = std::min(min_value, std::fabs(v));
  }
  if (max_value == 0) return false;
  return max_value >= 1e8 || min_value < 1e-4 || ratio_in_dtype(max_value, min_value, dtype) > 1000;
}

// Width of the text before the point.
size_t integer_width(const std::string& text) { return text.find('.'); }

}  // namespace

std::vector<std::string> format_floating(const std::vector<double>& values, Dtype dtype) {
  std::vector<double> finite;
  for (double v : values) {
    if (std::isfinite(v)) finite.push_back(v);
  }
  const bool scientific = use_scientific(finite, dtype);
  int decimals = 0, exponent_digits = 2;
  if (scientific) {
    for (double v : finite) {
      const Decimal d = scientific_digits(v, dtype);
      decimals = std::max(decimals, static_cast<int>(d.digits.size()) - 1);
      exponent_digits = std::max(exponent_digits, static_cast<int>(std::to_string(std::abs(d.exponent)).size()));
    }
  }
  std::vector<std::string> texts(values.size());
  size_t pad_left = 0, pad_right = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) continue;
    texts[i] = scientific ? scientific_element(values[i], dtype, decimals, exponent_digits)
                          : positional_element(values[i], dtype);
    pad_left = std::max(pad_left, integer_width(texts[i]));
    pad_right = std::max(pad_right, texts[i].size() - integer_width(texts[i]) - 1);
  }
  const bool any_negative_infinity = std::any_of(values.begin(), values.end(), [](double v) { return v == -INFINITY; });
  if (finite.size() != values.size()) {  // "nan", "inf" and "-inf" must fit the common width too
    const size_t longest = any_negative_infinity ? 4 : 3;
    pad_left = std::max(pad_left, longest > pad_right + 1 ? longest - pad_right - 1 : 0);
  }
  const size_t width = pad_left + 1 + pad_right;
  for (size_t i = 0; i < values.size(); ++i) {
    std::string& text = texts[i];
    if (std::isnan(values[i])) {
      text = "nan";
    } else if (std::isinf(values[i])) {
      text = values[i] < 0 ? "-inf" : "inf";
    } else {
      text.insert(0, pad_left - integer_width(text), ' ');
    }
    if (!std::isfinite(values[i])) text.insert(0, width - text.size(), ' ');
    text.resize(width, ' ');
  }
  return texts;
}

std::vector<std::string> format_integers(const std::vector<int64_t>& values) {
  std::vector<std::string> texts;
  size_t width = 0;
  for (int64_t v : values) {
    texts.push_back(std::to_string(v));
    width = std::max(width, texts.back().size());
  }
  for (std::string& text : texts) text.insert(0, width - text.size(), ' ');
  return texts;
}

std::vector<std::string> format_bools(const std::vector<int64_t>& values, bool zero_dimensional) {
  std::vector<std::string> texts;
  for (int64_t v : values) texts.push_back(v ? (zero_dimensional ? "True" : " True") : "False");
  return texts;
}

}  // namespace kusari::detail
