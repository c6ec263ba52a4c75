#pragma once
// Evaluation metrics (no gradient).

#include <cstdint>
#include <optional>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari::functions {

// The top-k accuracy: the fraction of samples counted correct, a sample being correct when fewer than k
// classes outrank its label over axis 1 of y: a class outranks it with a higher score, or an equal
// score at a lower index (ties go to the first class, so k = 1 is exactly the argmax accuracy and
// collapsed logits score chance, not 100%); a label outside [0, C) or a NaN score for it is a miss. y has shape (N, C, ...) of a floating
// dtype and t shape (N, ...) with an integer dtype; 1 <= k <= C (ValueError otherwise). Labels equal to
// ignore_label are not counted (0 when none count). Each sample's scores are read once, without
// sorting. A 0-dimensional constant in y's dtype.
KUSARI_API Variable accuracy(const Variable& y, const Variable& t, std::optional<int64_t> ignore_label = {}, int64_t k = 1);

}  // namespace kusari::functions
