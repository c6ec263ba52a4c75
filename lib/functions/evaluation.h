#pragma once
// Evaluation metrics (no gradient).

#include <cstdint>
#include <optional>

#include <kusari/autograd/variable.h>

namespace kusari::functions {

// The fraction of samples whose argmax over axis 1 of y equals the label: y has shape (N, C, ...) and
// t shape (N, ...) with an integer dtype. Labels equal to ignore_label are not counted (0 when none
// count). A 0-dimensional constant in y's dtype.
Variable accuracy(const Variable& y, const Variable& t, std::optional<int64_t> ignore_label = {});

}  // namespace kusari::functions
