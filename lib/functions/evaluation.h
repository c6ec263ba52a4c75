#pragma once
// Evaluation metrics (no gradient).

#include <cstdint>
#include <optional>

#include <kusari/autograd/variable.h>

namespace kusari::functions {

// The top-k accuracy: the fraction of samples counted correct, a sample being correct when fewer than k
// classes score strictly higher (over axis 1 of y) than its label does, so ties with the label count
// in its favour (for k = 1, the argmax hits, a tie at the top counting whichever tied class is the
// label); a label outside [0, C) or a NaN score for it is a miss. y has shape (N, C, ...) of a floating
// dtype and t shape (N, ...) with an integer dtype; 1 <= k <= C (ValueError otherwise). Labels equal to
// ignore_label are not counted (0 when none count). Each sample's scores are read once, without
// sorting. A 0-dimensional constant in y's dtype.
Variable accuracy(const Variable& y, const Variable& t, std::optional<int64_t> ignore_label = {}, int64_t k = 1);

}  // namespace kusari::functions
