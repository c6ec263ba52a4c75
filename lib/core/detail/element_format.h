#pragma once
// Internal to array printing: element text as NumPy's default print options give it (precision 8,
// floatmode "maxprec", no small-number suppression), padded so every element of one array is as wide.

#include <cstdint>
#include <string>
#include <vector>

#include <kusari/core/dtype.h>

namespace kusari::detail {

// Floating elements (of `dtype`, widened to double): positional or scientific for all alike, shortest
// digits that identify each value in its own dtype, at most 8 fractional digits, aligned on the point.
std::vector<std::string> format_floating(const std::vector<double>& values, Dtype dtype);
// Integer elements, right-aligned to the widest.
std::vector<std::string> format_integers(const std::vector<int64_t>& values);
// Bool elements: "True" padded to " True" unless the array is 0-dimensional, and "False".
std::vector<std::string> format_bools(const std::vector<int64_t>& values, bool zero_dimensional);

}  // namespace kusari::detail
